#!/usr/bin/env bash
# bench/pidns.sh: a launch inside a container's user and pid namespaces against the same launch
# outside, as an ordinary user (goal: at most 1.2x). Both run `isolate run -q -- true` in a fresh
# repository; "inside" is bubblewrap's --unshare-user --unshare-pid, with the container's own /proc
# (`--proc /proc`) and without it (a /proc of another pid namespace). bwrap's own cost is measured
# too (bwrap ... true) and taken out of the inside figures, so the ratio is isolate's.
#
#   bench/pidns.sh [--isolate PATH] [--runs N] [--user NAME]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
isolate="$root/target/release/isolate"
runs=30
user=""
while [ $# -gt 0 ]; do
	case "$1" in
	--isolate) isolate=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--user) user=$2; shift 2 ;;
	*) echo "usage: bench/pidns.sh [--isolate PATH] [--runs N] [--user NAME]" >&2; exit 2 ;;
	esac
done
[ -x "$isolate" ] || (cd "$root" && cargo build --release --quiet)
scratch=$(mktemp -d /tmp/isolate-pidns-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cp "$isolate" "$scratch/isolate"
[ -x "$(dirname "$isolate")/isolate-sandbox-exec" ] && cp "$(dirname "$isolate")/isolate-sandbox-exec" "$scratch/"
git init -q "$scratch/repo"
git -C "$scratch/repo" -c user.name=b -c user.email=b@x commit -q --allow-empty -m init
as() { if [ -n "$user" ]; then chown -R "$user" "$scratch"; setpriv --reuid "$user" --regid "$user" --clear-groups env HOME="$scratch" "$@"; else "$@"; fi; }
cd "$scratch/repo"
export ISOLATE_HOME="$scratch/state"
# One command's median wall time over $runs runs, in milliseconds.
median() {
	local times=()
	for _ in $(seq "$runs"); do
		local t0 t1
		t0=$(date +%s%N)
		as "$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		times+=($(( (t1 - t0) / 1000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}
bw="bwrap --dev-bind / / --unshare-user --unshare-pid"
outside=$(median "$scratch/isolate" run -q -- true)
bwrap_own=$(median $bw --proc /proc -- true)
inside=$(median $bw --proc /proc -- "$scratch/isolate" run -q -- true)
foreign=$(median $bw -- "$scratch/isolate" run -q -- true)
load=$(cut -d' ' -f1 /proc/loadavg)
awk -v o="$outside" -v b="$bwrap_own" -v i="$inside" -v f="$foreign" -v l="$load" -v r="$runs" 'BEGIN {
	printf "launch of `isolate run -q -- true`, median of %d, load %s\n", r, l
	printf "  outside                         %7.2f ms\n", o
	printf "  bwrap alone (its own cost)      %7.2f ms\n", b
	printf "  inside, the container'"'"'s /proc    %7.2f ms  ratio %.2fx (bwrap taken out)\n", i, (i - b) / o
	printf "  inside, another /proc           %7.2f ms  ratio %.2fx (bwrap taken out)\n", f, (f - b) / o
}'
