#!/usr/bin/env bash
# bench/connect.sh: what the seccomp layer's broker costs per connect.
#
# Inside one isolate job, a C loop (compiled here with cc) times N rounds of: socket, connect,
# accept, one byte each way, close; once to a unix socket of its own and once to a TCP listener of
# its own on 127.0.0.1. The same program runs under the default policy (the broker takes and makes
# every connect) and with --no-sandbox (the baseline: the kernel alone), alternating, --reps times
# each. Prints the median µs per round of each, and the ratios (target: <= 1.3x). A missed target
# is not an error: this is a benchmark. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/connect.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate, built if missing)
  --rounds N       connect rounds per measurement (default: 20000)
  --reps N         measurements of each kind (default: 5)
  --out FILE       also write one JSON object per metric to FILE (overwritten)
  -h, --help       show this help
EOF
}

isolate=""
rounds=20000
reps=5
out=""
# shellcheck disable=SC2034 # read by lib.sh
use_hyperfine=0

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--isolate=*) isolate=${1#*=}; shift ;;
	--rounds) (($# >= 2)) || die "--rounds needs a value"; rounds=$2; shift 2 ;;
	--rounds=*) rounds=${1#*=}; shift ;;
	--reps) (($# >= 2)) || die "--reps needs a value"; reps=$2; shift 2 ;;
	--reps=*) reps=${1#*=}; shift ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
need_positive --rounds "$rounds"
need_positive --reps "$reps"
cc=$(type -P cc || type -P gcc) || die "no C compiler (cc) in PATH"

find_isolate
open_out
make_work
copy_isolate
mkdir -p "$work/cwd" "$work/state" "$work/home"
unset_isolate_env
export ISOLATE_HOME="$work/state"
export HOME="$work/home"
cd "$work/cwd"

cat >"$work/loop.c" <<'EOF'
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double rounds(int family, struct sockaddr *addr, socklen_t len, int n) {
	int srv = socket(family, SOCK_STREAM, 0);
	if (srv < 0 || bind(srv, addr, len) || listen(srv, 128)) { perror("server"); exit(1); }
	if (family == AF_INET) getsockname(srv, addr, &len);
	char b = 'x';
	double t0 = now();
	for (int i = 0; i < n; i++) {
		int c = socket(family, SOCK_STREAM, 0);
		if (connect(c, addr, len)) { perror("connect"); exit(1); }
		int s = accept(srv, 0, 0);
		if (write(c, &b, 1) != 1 || read(s, &b, 1) != 1) { perror("io"); exit(1); }
		close(s);
		close(c);
	}
	double us = (now() - t0) * 1e6 / n;
	close(srv);
	return us;
}

int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	snprintf(un.sun_path, sizeof un.sun_path, "%s/own.sock", getenv("TMPDIR"));
	unlink(un.sun_path);
	struct sockaddr_in in = {.sin_family = AF_INET};
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	double u = rounds(AF_UNIX, (struct sockaddr *)&un, sizeof un, n);
	double t = rounds(AF_INET, (struct sockaddr *)&in, sizeof in, n);
	printf("%.2f %.2f\n", u, t);
	return 0;
}
EOF
"$cc" -O2 -o "$work/loop" "$work/loop.c" || die "cannot compile the connect loop"

"$isolate" run -q --report "$work/report.json" -- true </dev/null ||
	die "isolate run -q -- true failed (exit $?); can it sandbox here? (isolate doctor)"
grep -Eq '"enforced": *true' "$work/report.json" || die "isolate did not enforce its sandbox here"
grep -q '"refused"' "$work/report.json" || die "the seccomp layer is not in force here (isolate doctor)"

layer_unix=() layer_tcp=() base_unix=() base_tcp=()
for ((r = 0; r < reps; r++)); do
	# $(...) waits for isolate itself to end, not only for the loop's line.
	read -r u t <<<"$("$isolate" run -q -- "$work/loop" "$rounds" </dev/null)"
	layer_unix+=("$u") layer_tcp+=("$t")
	read -r u t <<<"$("$isolate" run -q --no-sandbox -- "$work/loop" "$rounds" </dev/null)"
	base_unix+=("$u") base_tcp+=("$t")
	rm -rf "${ISOLATE_HOME:?}/jobs/"*
done

STATS_DECIMALS=2
median() { stats "$@" | cut -d' ' -f1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

printf 'kernel %s, %s CPUs, %d rounds per measurement, %d measurements each\n\n' \
	"$(uname -r)" "$(cpus '?')" "$rounds" "$reps"
printf '%-40s  %12s  %12s  %7s  %s\n' "connect round (socket, connect, accept, 1 byte each way)" \
	"layer µs" "kernel µs" ratio "target <= 1.3x"
for kind in unix tcp; do
	if [[ $kind == unix ]]; then
		l=$(median "${layer_unix[@]}") b=$(median "${base_unix[@]}")
		label="to the job's own unix socket"
	else
		l=$(median "${layer_tcp[@]}") b=$(median "${base_tcp[@]}")
		label="to the job's own TCP listener, loopback"
	fi
	r=$(ratio "$l" "$b")
	verdict=$(awk -v r="$r" 'BEGIN { print (r <= 1.3) ? "met" : "missed" }')
	printf '%-56s  %12s  %12s  %6sx  %s\n' "$label" "$l" "$b" "$r" "$verdict"
	if [[ -n $out ]]; then
		printf '{"bench":"connect","metric":"ratio_%s","value":%s,"unit":"x","layer_us":%s,"kernel_us":%s,"target":"<= 1.3","target_met":%s,"rounds":%d,"reps":%d}\n' \
			"$kind" "$r" "$l" "$b" "$([[ $verdict == met ]] && echo true || echo false)" "$rounds" "$reps" >>"$out"
	fi
done
