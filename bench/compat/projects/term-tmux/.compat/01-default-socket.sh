. .compat/common.sh
# A tmux server of the job's own, on tmux's default socket (/tmp/tmux-UID/default).
tmux new-session -d -s compat -x 80 -y 24
trap 'tmux kill-server 2>/dev/null || true' EXIT
tmux send-keys -t compat 'echo hello-from-tmux > tmux-out.txt' Enter
for _ in $(seq 1 50); do [[ -s tmux-out.txt ]] && break; sleep 0.1; done
grep -q hello-from-tmux tmux-out.txt
tmux capture-pane -p -t compat | grep -q hello-from-tmux
echo tmux ok
