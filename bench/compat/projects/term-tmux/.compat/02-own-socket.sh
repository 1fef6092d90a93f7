. .compat/common.sh
sock=$(mktemp -u "$TMPDIR/tmux.XXXXXX")
tmux -S "$sock" new-session -d -s compat -x 80 -y 24
trap 'tmux -S "$sock" kill-server 2>/dev/null || true' EXIT
tmux -S "$sock" send-keys -t compat 'echo hello-from-tmux > tmux-out.txt' Enter
for _ in $(seq 1 50); do [[ -s tmux-out.txt ]] && break; sleep 0.1; done
tmux -S "$sock" capture-pane -p -t compat | grep -q hello-from-tmux
echo tmux ok
