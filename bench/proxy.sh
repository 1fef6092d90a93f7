#!/usr/bin/env bash
# bench/proxy.sh: what a job's network proxy (a policy with `[network] allow`) costs.
#
# A local HTTP server (python3) serves a file of --size MiB, and a local TCP echo server answers
# one byte. Throughput: curl downloads the file directly (no job) and from inside an isolate job
# whose allowlist names the server (through the proxy: absolute-form HTTP), alternating, --reps
# times each; the median MB/s of each and their ratio (target: proxy >= 0.8x direct). Connect
# latency: a Python loop times --rounds rounds of connect, one byte each way, close, directly to
# the echo server (no job) and through the proxy (connect to it, CONNECT with the job's
# credentials, 200, then the byte); the median µs per round of each and the difference (target:
# the proxy adds <= 1 ms). Both measured in the same run. A missed target is not an error: this is
# a benchmark. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/proxy.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate, built if missing)
  --size MIB       size of the download (default: 100)
  --rounds N       connect rounds per measurement (default: 2000)
  --reps N         measurements of each kind (default: 5)
  --rss-size MIB   size of the download whose relay the proxy's peak RSS is read over
                   (default: 1024; 0 leaves the RSS part out)
  --out FILE       also write one JSON object per metric to FILE (overwritten)
  -h, --help       show this help
EOF
}

isolate=""
size=100
rounds=2000
reps=5
rss_size=1024
out=""
# shellcheck disable=SC2034 # read by lib.sh
use_hyperfine=0

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--isolate=*) isolate=${1#*=}; shift ;;
	--size) (($# >= 2)) || die "--size needs a value"; size=$2; shift 2 ;;
	--size=*) size=${1#*=}; shift ;;
	--rounds) (($# >= 2)) || die "--rounds needs a value"; rounds=$2; shift 2 ;;
	--rounds=*) rounds=${1#*=}; shift ;;
	--reps) (($# >= 2)) || die "--reps needs a value"; reps=$2; shift 2 ;;
	--reps=*) reps=${1#*=}; shift ;;
	--rss-size) (($# >= 2)) || die "--rss-size needs a value"; rss_size=$2; shift 2 ;;
	--rss-size=*) rss_size=${1#*=}; shift ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
need_positive --size "$size"
need_positive --rounds "$rounds"
need_positive --reps "$reps"
command -v curl >/dev/null || die "no curl in PATH"
command -v python3 >/dev/null || die "no python3 in PATH"

find_isolate
open_out
make_work
copy_isolate
mkdir -p "$work/cwd" "$work/state" "$work/home" "$work/served"
unset_isolate_env
unset HTTPS_PROXY https_proxy HTTP_PROXY http_proxy ALL_PROXY all_proxy NO_PROXY no_proxy
export ISOLATE_HOME="$work/state"
export HOME="$work/home"
cd "$work/cwd"

servers=()
cleanup() {
	local pid
	for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
	remove_work
}

head -c "$((size * 1024 * 1024))" /dev/zero >"$work/served/blob"
if ((rss_size > 0)); then
	truncate -s "$((rss_size * 1024 * 1024))" "$work/served/rss-blob"
fi

# A server that prints its port, then serves; its pid goes to `servers`.
start_server() {
	local name=$1 program=$2 port=""
	python3 -u -c "$program" >"$work/$name.port" 2>/dev/null &
	servers+=("$!")
	for _ in $(seq 100); do
		port=$(head -n 1 "$work/$name.port" 2>/dev/null || true)
		[[ -n $port ]] && break
		sleep 0.05
	done
	[[ -n $port ]] || die "the $name server did not start"
	printf '%s' "$port"
}

http_port=$(cd "$work/served" && start_server http '
import http.server, os, shutil
class H(http.server.SimpleHTTPRequestHandler):
    def copyfile(self, src, dst):
        # sendfile: the server is not what is measured.
        os.sendfile(dst.fileno(), src.fileno(), 0, os.fstat(src.fileno()).st_size)
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(srv.server_address[1])
srv.serve_forever()
')
echo_port=$(start_server echo '
import socket, threading
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(512)
print(srv.getsockname()[1])
def serve(c):
    with c:
        while True:
            b = c.recv(1)
            if not b: return
            c.sendall(b)
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
')

cat >"$work/policy.toml" <<EOF
extends = "default"
[network]
allow = ["localhost:$http_port", "localhost:$echo_port"]
allow_local = true
EOF

cat >"$work/rounds.py" <<'EOF'
import base64, os, socket, sys, time, urllib.parse
n, port, via = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
proxy = urllib.parse.urlsplit(os.environ.get("HTTPS_PROXY", "http://x:y@127.0.0.1:1"))
auth = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
request = f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\nProxy-Authorization: Basic {auth}\r\n\r\n".encode()
t0 = time.monotonic()
for _ in range(n):
    c = socket.create_connection(("127.0.0.1", proxy.port if via == "proxy" else port))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if via == "proxy":
        c.sendall(request)
        got = b""
        while not got.endswith(b"\r\n\r\n"):
            got += c.recv(4096)
        assert got.startswith(b"HTTP/1.1 200"), got
    c.sendall(b"x")
    assert c.recv(1) == b"x"
    c.close()
print("%.1f" % ((time.monotonic() - t0) * 1e6 / n))
EOF

url="http://localhost:$http_port/blob"
download() { curl -sS -o /dev/null -w '%{speed_download}\n' "$url"; }

"$isolate" run -q --policy "$work/policy.toml" --report "$work/report.json" -- \
	curl -sS -o /dev/null "$url" </dev/null ||
	die "a download through the proxy failed (exit $?); can isolate sandbox here? (isolate doctor)"
grep -q '"network"' "$work/report.json" || die "the job did not run behind the proxy"

direct_mbs=() proxy_mbs=() direct_us=() proxy_us=()
for ((r = 0; r < reps; r++)); do
	direct_mbs+=("$(download | awk '{ printf "%.1f", $1 / 1e6 }')")
	b=$("$isolate" run -q --policy "$work/policy.toml" -- \
		curl -sS -o /dev/null -w '%{speed_download}\n' "$url" </dev/null)
	proxy_mbs+=("$(awk '{ printf "%.1f", $1 / 1e6 }' <<<"$b")")
	direct_us+=("$(python3 "$work/rounds.py" "$rounds" "$echo_port" direct)")
	# The script reaches the job on its standard input: a job reads nothing under /dev/shm (the
	# user's shared memory), where TMPDIR=/dev/shm puts the scratch directory.
	proxy_us+=("$("$isolate" run -q --policy "$work/policy.toml" -- \
		python3 - "$rounds" "$echo_port" proxy <"$work/rounds.py")")
	rm -rf "${ISOLATE_HOME:?}/jobs/"*
done

median() { stats "$@" | cut -d' ' -f1; }

printf 'kernel %s, %s CPUs, %d MiB download, %d connect rounds, %d measurements each\n\n' \
	"$(uname -r)" "$(cpus '?')" "$size" "$rounds" "$reps"
d=$(median "${direct_mbs[@]}") p=$(median "${proxy_mbs[@]}")
ratio=$(awk -v a="$p" -v b="$d" 'BEGIN { printf "%.2f", a / b }')
verdict=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.8) ? "met" : "missed" }')
printf '%-44s  %10s  %10s  %7s  %s\n' "download (curl, local HTTP server)" "direct MB/s" "proxy MB/s" ratio \
	"target >= 0.8x"
printf '%-44s  %11s  %10s  %6sx  %s\n' "${size} MiB" "$d" "$p" "$ratio" "$verdict"
if [[ -n $out ]]; then
	printf '{"bench":"proxy","metric":"download_ratio","value":%s,"unit":"x","direct_mbs":%s,"proxy_mbs":%s,"target":">= 0.8","target_met":%s,"size_mib":%d,"reps":%d}\n' \
		"$ratio" "$d" "$p" "$([[ $verdict == met ]] && echo true || echo false)" "$size" "$reps" >>"$out"
fi
d=$(median "${direct_us[@]}") p=$(median "${proxy_us[@]}")
added=$(awk -v a="$p" -v b="$d" 'BEGIN { printf "%.1f", a - b }')
verdict=$(awk -v x="$added" 'BEGIN { print (x <= 1000) ? "met" : "missed" }')
printf '\n%-44s  %10s  %10s  %7s  %s\n' "connect round (connect, 1 byte each way)" "direct µs" "proxy µs" "added" \
	"target <= 1000 µs"
printf '%-44s  %10s  %10s  %7s  %s\n' "to a local echo server (proxy: CONNECT)" "$d" "$p" "$added" "$verdict"
if [[ -n $out ]]; then
	printf '{"bench":"proxy","metric":"connect_added_us","value":%s,"unit":"us","direct_us":%s,"proxy_us":%s,"target":"<= 1000","target_met":%s,"rounds":%d,"reps":%d}\n' \
		"$added" "$d" "$p" "$([[ $verdict == met ]] && echo true || echo false)" "$rounds" "$reps" >>"$out"
fi

# The proxy's memory: it runs in the job's supervisor, so the supervisor's peak RSS (VmHWM, polled
# every 20 ms) while a background job downloads --rss-size MiB through it. Target <= 16 MiB.
if ((rss_size > 0)); then
	json=$("$isolate" run --bg --json -q --policy "$work/policy.toml" -- \
		curl -sS -o /dev/null "http://localhost:$http_port/rss-blob" 2>&1 </dev/null) ||
		die "isolate run --bg failed: $json"
	read -r rss_id sup_pid <<<"$(python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        if "supervisor_pid" in r:
            print(r["id"], r["supervisor_pid"]); break
' <<<"$json")"
	[[ -n ${sup_pid:-} ]] || die "no supervisor_pid in the output of isolate run --bg --json: $json"
	hwm=0 samples=0
	while [[ -r /proc/$sup_pid/status ]]; do
		v=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$sup_pid/status" 2>/dev/null || true)
		[[ -n $v ]] || break
		((v > hwm)) && hwm=$v
		samples=$((samples + 1))
		sleep 0.02
	done
	"$isolate" wait "$rss_id" || die "the download through the proxy (job $rss_id) failed"
	mib=$(awk -v k="$hwm" 'BEGIN { printf "%.2f", k / 1024 }')
	verdict=$(awk -v k="$hwm" 'BEGIN { print (k <= 16 * 1024) ? "met" : "missed" }')
	printf '\n%-44s  %10s  %8s  %s\n' "proxy (supervisor) peak RSS" "MiB" samples "target <= 16 MiB"
	printf '%-44s  %10s  %8d  %s\n' "relaying ${rss_size} MiB (curl from a job)" "$mib" "$samples" "$verdict"
	if [[ -n $out ]]; then
		printf '{"bench":"proxy","metric":"proxy_peak_rss_mib","value":%s,"unit":"MiB","samples":%d,"size_mib":%d,"target":"<= 16","target_met":%s}\n' \
			"$mib" "$samples" "$rss_size" "$([[ $verdict == met ]] && echo true || echo false)" >>"$out"
	fi
fi
