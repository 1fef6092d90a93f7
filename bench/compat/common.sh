# shellcheck shell=bash
# .compat/common.sh: sourced by every step of a compatibility project (bench/compat.sh copies it
# into each project as .compat/common.sh). A step runs in a fresh checkout, bare or under isolate,
# so it installs what it needs itself; these helpers keep that short.
set -euo pipefail

PY=${COMPAT_PYTHON:-python3}
export TMPDIR=${TMPDIR:-/tmp}

# venv PACKAGE...: a virtual environment in .venv with PACKAGE... installed, activated.
venv() {
	"$PY" -m venv .venv
	# shellcheck disable=SC1091
	. .venv/bin/activate
	if (($#)); then pip install -q "$@"; fi
}

# bg LOG CMD...: start CMD in the background, its output to LOG; killed when the step exits.
BG_PIDS=()
bg() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	BG_PIDS+=($!)
}
stop_bg() {
	local p
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${BG_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap stop_bg EXIT

# wait_http URL [LOG]: poll URL until it answers (30 s at most), then fetch it once more for real
# (with the proxy variables the step has, as a developer's curl would); print LOG when it fails.
wait_http() {
	local url=$1 log=${2:-} i
	for i in $(seq 1 150); do
		if curl -fsS -o /dev/null "$url" 2>/dev/null; then break; fi
		sleep 0.2
	done
	if ! curl -fsS "$url"; then
		echo "wait_http: $url did not answer" >&2
		if [[ -n $log ]]; then tail -n 20 "$log" >&2; fi
		return 1
	fi
	echo
}

# port_free N: succeed if nothing listens on TCP port N.
port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
