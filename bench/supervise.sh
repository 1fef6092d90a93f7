#!/usr/bin/env bash
# bench/supervise.sh: the cost of supervision, against what it would cost without isolate.
#
#   rss:  peak RSS (VmHWM) of a background job's supervisor while it relays a busy writer
#         (yes | head -c 2G) into its log, of the watchdog above it, and of the foreground
#         isolate process (headless, and with a pty of its own when script(1) is installed);
#         baseline: cat (or script) relaying the same stream. Target: <= 8 MiB.
#   ps:   isolate ps --all --json / ps --all / ps over 1,000 ended-job records (copies of a
#         real record); baseline: cat of every job.json. Target: median < 50 ms.
#   log:  a background job writing 1 GiB to its log (no rotation), start until `isolate wait`
#         returns, against head -c 1G /dev/zero | cat > file on the same filesystem.
#         Target: isolate >= 0.8x the baseline's MiB/s.
#
# Everything runs in a scratch directory under $TMPDIR (ISOLATE_HOME included), removed on
# exit. A missed target is not an error: this is a benchmark. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/supervise.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate under the
                   repository root, built with `cargo build --release` if missing)
  --runs N         timed runs of each ps command (default: 10, after 2 warm-ups)
  --log-runs N     timed runs of each log flow (default: 3)
  --records N      ended-job records for the ps benchmark (default: 1000)
  --out FILE       also write one JSON object per measurement to FILE (overwritten)
  --skip-rss       skip the RSS measurements
  --skip-ps        skip the ps measurements
  --skip-log       skip the log throughput measurements
  --no-hyperfine   time ps with the built-in loop even if hyperfine is installed
  -h, --help       show this help
EOF
}

isolate=""
runs=10
log_runs=3
records=1000
out=""
use_hyperfine=1
do_rss=1
do_ps=1
do_log=1

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--isolate=*) isolate=${1#*=}; shift ;;
	--runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
	--runs=*) runs=${1#*=}; shift ;;
	--log-runs) (($# >= 2)) || die "--log-runs needs a value"; log_runs=$2; shift 2 ;;
	--log-runs=*) log_runs=${1#*=}; shift ;;
	--records) (($# >= 2)) || die "--records needs a value"; records=$2; shift 2 ;;
	--records=*) records=${1#*=}; shift ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	--skip-rss) do_rss=0; shift ;;
	--skip-ps) do_ps=0; shift ;;
	--skip-log) do_log=0; shift ;;
	--no-hyperfine) use_hyperfine=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done

need_positive --runs "$runs"
need_positive --log-runs "$log_runs"
if ! [[ $records =~ ^[1-9][0-9]*$ ]] || ((records > 65536)); then
	die "--records must be an integer from 1 to 65536, got '$records'"
fi

command -v python3 >/dev/null || die "python3 not found (used to copy records and read JSON)"
[[ -r /proc/self/status ]] || die "/proc is not mounted"

find_isolate
isolate_real=$(readlink -f "$isolate")
open_out

pick_timer

make_work
normalize_work
fstype=$(fs_type "$work")

# Background jobs started here ("state-dir id"), and processes started here, for clean-up: this
# cleanup replaces the one in lib.sh (the EXIT trap make_work set).
bg_jobs=()
our_pids=()
cleanup() {
	local entry pid
	for pid in "${our_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for entry in "${bg_jobs[@]}"; do
		ISOLATE_HOME=${entry% *} "$isolate" stop --grace 1s "${entry#* }" >/dev/null 2>&1 || true
	done
	remove_work
}

# Never the user's state: every phase sets its own ISOLATE_HOME under $work.
unset ISOLATE_HOME ISOLATE_LOG_MAX
cd "$work"

mib() {
	awk -v k="$1" 'BEGIN { printf "%.2f", k / 1024 }'
}

# Table rows: "name|value|target|baseline|verdict".
rows=()

# emit METRIC VALUE UNIT TARGET BASELINE MET [EXTRA_JSON]: one JSON object to --out. TARGET is
# text ("<= 8", "" for none), BASELINE a number or null, MET true, false or null.
emit() {
	[[ -n $out ]] || return 0
	printf '{"bench":"supervise","metric":"%s","value":%s,"unit":"%s","target":"%s","baseline":%s,"target_met":%s,"fs":"%s","timer":"%s","cpus":%s%s}\n' \
		"$1" "$2" "$3" "$4" "$5" "$6" "$fstype" "$timer" "$(cpus null)" "${7:-}" >>"$out"
}

verdict() {
	if [[ $1 == true ]]; then printf met; else printf missed; fi
}

# read_vm PID: VM_HWM and VM_RSS of PID in kB; fails once PID is gone or a zombie.
VM_HWM=0
VM_RSS=0
read_vm() {
	local k v rest
	VM_HWM=0
	VM_RSS=0
	{
		while read -r k v rest; do
			case $k in
			VmHWM:) VM_HWM=$v ;;
			VmRSS:) VM_RSS=$v ;;
			esac
		done
	} 2>/dev/null <"/proc/$1/status" || return 1
	: "$rest"
	((VM_RSS > 0))
}

# sample PID...: poll /proc/PID/status of every PID every 20 ms until the first one has ended.
# PEAK_HWM[i] / PEAK_RSS[i]: highest VmHWM / VmRSS seen for the i-th PID (kB), SAMPLES: polls.
PEAK_HWM=()
PEAK_RSS=()
SAMPLES=0
sample() {
	local pids=("$@") i
	PEAK_HWM=()
	PEAK_RSS=()
	SAMPLES=0
	for i in "${!pids[@]}"; do
		PEAK_HWM[i]=0
		PEAK_RSS[i]=0
	done
	while read_vm "${pids[0]}"; do
		for i in "${!pids[@]}"; do
			if ((i == 0)) || read_vm "${pids[i]}"; then
				((VM_HWM > PEAK_HWM[i])) && PEAK_HWM[i]=$VM_HWM
				((VM_RSS > PEAK_RSS[i])) && PEAK_RSS[i]=$VM_RSS
			fi
		done
		SAMPLES=$((SAMPLES + 1))
		sleep 0.02
	done
}

# ppid_of PID: the parent's pid.
ppid_of() {
	local k v
	while read -r k v; do
		if [[ $k == PPid: ]]; then
			printf '%s' "$v"
			return 0
		fi
	done <"/proc/$1/status"
	return 1
}

printf 'isolate: %s\n' "$isolate"
printf '%s CPUs, ps timer: %s; scratch and ISOLATE_HOME: %s (%s; set TMPDIR to move it)\n\n' \
	"$(cpus '?')" "$timer" "$work" "$fstype"

target_kib=$((8 * 1024))

# --- 1. supervisor RSS ------------------------------------------------------------------------
if ((do_rss)); then
	export ISOLATE_HOME="$work/state-rss"
	mkdir -p "$ISOLATE_HOME"

	# Baseline: cat relaying the same 2 GiB stream (to /dev/null).
	printf 'rss: baseline, yes | head -c 2G | cat > /dev/null ...\n'
	{ yes || :; } | head -c 2G | cat >/dev/null &
	cat_pid=$!
	our_pids+=("$cat_pid")
	sample "$cat_pid"
	wait "$cat_pid" || die "the baseline pipeline failed"
	our_pids=()
	cat_hwm=${PEAK_HWM[0]}

	# Background: the supervisor splices the job's output into its log (rotated at 64M).
	printf 'rss: isolate run --bg -- sh -c "yes | head -c 2G" (ISOLATE_LOG_MAX=64M) ...\n'
	stamp
	t0=$NOW
	json=$(ISOLATE_LOG_MAX=64M "$isolate" run --bg --json -q -- sh -c 'yes | head -c 2G' 2>&1) ||
		die "isolate run --bg failed: $json"
	read -r bg_id sup_pid <<<"$(python3 -c '
import json, sys
for line in sys.stdin:
    line = line.strip()
    if line.startswith("{"):
        r = json.loads(line)
        if "supervisor_pid" in r:
            print(r["id"], r["supervisor_pid"]); break
' <<<"$json")"
	[[ -n ${sup_pid:-} ]] || die "no supervisor_pid in the output of isolate run --bg --json: $json"
	bg_jobs+=("$ISOLATE_HOME $bg_id")
	watchdog=$(ppid_of "$sup_pid" 2>/dev/null || echo 0)
	if ((watchdog > 1)) && [[ $(readlink "/proc/$watchdog/exe" 2>/dev/null) == "$isolate_real" ]]; then
		sample "$sup_pid" "$watchdog"
	else
		watchdog=0
		sample "$sup_pid"
	fi
	sup_hwm=${PEAK_HWM[0]}
	sup_rss=${PEAK_RSS[0]}
	sup_samples=$SAMPLES
	wd_hwm=${PEAK_HWM[1]:-0}
	wd_rss=${PEAK_RSS[1]:-0}
	"$isolate" wait "$bg_id" || die "background job $bg_id did not exit 0"
	stamp
	bg_s=$(awk -v a="$t0" -v b="$NOW" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	printf '     %s samples over %s s (%s MiB/s through the relay, rotation included)\n' \
		"$sup_samples" "$bg_s" "$(awk -v s="$bg_s" 'BEGIN { printf "%.0f", (s > 0) ? 2048 / s : 0 }')"
	rm -f "$ISOLATE_HOME/jobs/$bg_id"/output.log*

	# Foreground, headless (stdin not a terminal): the job's stdout is passed through.
	printf 'rss: isolate run -- sh -c "yes | head -c 1G" > /dev/null ...\n'
	"$isolate" run -q -- sh -c 'yes | head -c 1G' >/dev/null </dev/null &
	fg_pid=$!
	our_pids+=("$fg_pid")
	sample "$fg_pid"
	fg_hwm=${PEAK_HWM[0]}
	fg_rss=${PEAK_RSS[0]}
	wait "$fg_pid" || die "foreground isolate run failed"
	our_pids=()

	# Foreground with a terminal (script(1) provides it): isolate relays the job's own pty.
	pty_hwm=""
	if command -v script >/dev/null; then
		printf 'rss: script -c "isolate run -- sh -c \\"yes | head -c 32M\\"" (own pty) ...\n'
		# The shell script(1) starts writes its pid, then execs isolate in place.
		pidfile="$work/pty.pid"
		printf -v pty_cmd 'echo $$ >%q; exec %q run -q -- sh -c %q' \
			"$pidfile" "$isolate" 'yes | head -c 32M'
		SHELL=/bin/sh script -qefc "$pty_cmd" /dev/null >/dev/null </dev/null &
		script_pid=$!
		our_pids+=("$script_pid")
		pty_pid=""
		for ((i = 0; i < 250; i++)); do
			if [[ -s $pidfile ]]; then
				read -r pty_pid <"$pidfile"
				[[ $(readlink "/proc/$pty_pid/exe" 2>/dev/null) == "$isolate_real" ]] && break
				pty_pid=""
			fi
			sleep 0.02
		done
		if [[ -n $pty_pid ]]; then
			sample "$pty_pid" "$script_pid"
			pty_hwm=${PEAK_HWM[0]}
			pty_rss=${PEAK_RSS[0]}
			script_hwm=${PEAK_HWM[1]}
		else
			warn "could not find the isolate process under script(1); pty case skipped"
		fi
		wait "$script_pid" || die "isolate run under script(1) failed"
		our_pids=()
	fi

	m=$( ((sup_hwm <= target_kib)) && echo true || echo false)
	rows+=("supervisor peak RSS, --bg, 2 GiB of yes|$(mib "$sup_hwm") MiB (RSS max $(mib "$sup_rss"))|<= 8 MiB|cat $(mib "$cat_hwm") MiB|$(verdict "$m")")
	emit supervisor_bg_vmhwm "$(mib "$sup_hwm")" MiB "<= 8" "$(mib "$cat_hwm")" "$m" \
		",\"vmrss_max_mib\":$(mib "$sup_rss"),\"samples\":$sup_samples,\"seconds\":$bg_s"
	if ((watchdog > 0)); then
		rows+=("watchdog (supervisor's parent) peak RSS|$(mib "$wd_hwm") MiB (RSS max $(mib "$wd_rss"))|-|-|-")
		emit watchdog_bg_vmhwm "$(mib "$wd_hwm")" MiB "" null null ",\"vmrss_max_mib\":$(mib "$wd_rss")"
	else
		rows+=("watchdog (supervisor's parent)|not found|-|-|-")
	fi
	m=$( ((fg_hwm <= target_kib)) && echo true || echo false)
	rows+=("isolate peak RSS, foreground headless, 1 GiB|$(mib "$fg_hwm") MiB (RSS max $(mib "$fg_rss"))|<= 8 MiB|cat $(mib "$cat_hwm") MiB|$(verdict "$m")")
	emit foreground_headless_vmhwm "$(mib "$fg_hwm")" MiB "<= 8" "$(mib "$cat_hwm")" "$m" \
		",\"vmrss_max_mib\":$(mib "$fg_rss")"
	if [[ -n $pty_hwm ]]; then
		m=$( ((pty_hwm <= target_kib)) && echo true || echo false)
		rows+=("isolate peak RSS, foreground pty, 32 MiB|$(mib "$pty_hwm") MiB (RSS max $(mib "$pty_rss"))|<= 8 MiB|script $(mib "$script_hwm") MiB|$(verdict "$m")")
		emit foreground_pty_vmhwm "$(mib "$pty_hwm")" MiB "<= 8" "$(mib "$script_hwm")" "$m" \
			",\"vmrss_max_mib\":$(mib "$pty_rss")"
	fi
	printf '\n'
fi

# --- 2. ps over many records ------------------------------------------------------------------
# time_cmds CMD...: median and min of each command, in ms, as "median min" in TIMES (same order);
# every run's time in RUNS_JSON. Each CMD is one simple command, words quoted as by printf %q, run
# without a shell in between (hyperfine -N, or eval in this shell).
TIMES=()
RUNS_JSON=()
time_cmds() {
	local cmds=("$@") c i t0 list
	TIMES=()
	RUNS_JSON=()
	if ((use_hyperfine)); then
		local json="$work/hyperfine.json"
		hyperfine -N --warmup 2 --runs "$runs" --style none --export-json "$json" "${cmds[@]}" >/dev/null ||
			die "a ps command failed under hyperfine (rerun with --no-hyperfine to see its output)"
		local line
		while read -r line; do
			TIMES+=("${line%%|*}")
			RUNS_JSON+=("${line#*|}")
		done < <(python3 -c '
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    t = [x * 1000 for x in r["times"]]
    print("%.1f %.1f|[%s]" % (statistics.median(t), min(t), ",".join("%.3f" % x for x in t)))
' "$json")
		return 0
	fi
	for c in "${cmds[@]}"; do
		eval "$c" >/dev/null || die "command failed: $c"
		eval "$c" >/dev/null
		list=()
		for ((i = 0; i < runs; i++)); do
			stamp
			t0=$NOW
			eval "$c" >/dev/null
			stamp
			list+=("$(ms_between "$t0" "$NOW")")
		done
		TIMES+=("$(stats "${list[@]}")")
		RUNS_JSON+=("$(json_array "${list[@]}")")
	done
}

if ((do_ps)); then
	export ISOLATE_HOME="$work/state-ps"
	mkdir -p "$ISOLATE_HOME"
	printf 'ps: 3 real jobs, then %d copies of one ended record ...\n' "$records"
	"$isolate" run -q --name "seed one" -- true </dev/null
	"$isolate" run -q --name "seed two" -- sh -c 'echo hi' >/dev/null </dev/null
	"$isolate" run -q --name "seed three" -- sh -c 'exit 3' </dev/null || true
	jobs_dir="$ISOLATE_HOME/jobs"
	seeds=("$jobs_dir"/seed-one-*/job.json)
	[[ -f ${seeds[0]} ]] || die "no record for the seed job in $jobs_dir"
	seed=$(basename "$(dirname "${seeds[0]}")")
	python3 - "$jobs_dir" "$seed" "$records" <<'EOF'
import json, os, sys
jobs, seed, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = os.path.join(jobs, seed)
with open(os.path.join(src, "job.json")) as f:
    record = json.load(f)
if record.get("state") == "running":
    sys.exit("the seed record is still running")
for i in range(n):
    new = "bench-%04x" % i
    d = os.path.join(jobs, new)
    os.mkdir(d, 0o755)
    record["id"] = new
    if isinstance(record.get("log"), str):
        record["log"] = os.path.join(d, "output.log")
    path = os.path.join(d, "job.json")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
EOF
	total=$((records + 3))
	listed=$("$isolate" ps --all --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
	((listed == total)) || warn "isolate ps --all --json lists $listed jobs, $total on record"
	# From inside jobs/, so that the baseline's file list is short relative paths.
	cd "$jobs_dir"
	printf -v q_iso '%q' "$isolate"
	cat_cmd="cat"
	for f in */job.json; do
		cat_cmd+=" $f"
	done
	time_cmds "$q_iso ps --all --json" "$q_iso ps --all" "$q_iso ps" "$cat_cmd"
	cd "$work"
	read -r cat_med cat_min <<<"${TIMES[3]}"
	names=("ps --all --json" "ps --all" "ps")
	metrics=(ps_all_json_ms ps_all_ms ps_ms)
	for i in 0 1 2; do
		read -r med min <<<"${TIMES[i]}"
		m=$(awk -v x="$med" 'BEGIN { print (x < 50) ? "true" : "false" }')
		rows+=("${names[i]}, $total records, median (min)|$med ms ($min)|< 50 ms|cat $cat_med ms ($cat_min)|$(verdict "$m")")
		emit "${metrics[i]}" "$med" ms "< 50" "$cat_med" "$m" \
			",\"records\":$total,\"runs\":$runs,\"min_ms\":$min,\"times_ms\":${RUNS_JSON[i]},\"baseline_times_ms\":${RUNS_JSON[3]}"
	done
	printf '\n'
fi

# --- 3. log throughput ------------------------------------------------------------------------
if ((do_log)); then
	export ISOLATE_HOME="$work/state-log"
	mkdir -p "$ISOLATE_HOME"
	gib=1073741824
	free_kib=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
	((free_kib > 3 * 1024 * 1024 / 2)) || die "less than 1.5 GiB free in $work ($fstype)"
	printf 'log: %d runs each of 1 GiB, baseline and isolate alternating ...\n' "$log_runs"
	base=()
	iso=()
	for ((r = 1; r <= log_runs; r++)); do
		stamp
		t0=$NOW
		head -c "$gib" /dev/zero | cat >"$work/baseline.bin"
		stamp
		base+=("$(ms_between "$t0" "$NOW")")
		rm -f "$work/baseline.bin"

		stamp
		t0=$NOW
		id=$(ISOLATE_LOG_MAX=2G "$isolate" run --bg -q -- head -c "$gib" /dev/zero) ||
			die "isolate run --bg failed"
		bg_jobs+=("$ISOLATE_HOME $id")
		"$isolate" wait "$id" || die "background job $id did not exit 0"
		stamp
		iso+=("$(ms_between "$t0" "$NOW")")
		log="$ISOLATE_HOME/jobs/$id/output.log"
		size=$(stat -c %s "$log" 2>/dev/null || echo 0)
		((size == gib)) || warn "job $id: output.log has $size bytes, expected $gib"
		[[ ! -e $log.1 ]] || warn "job $id: the log was rotated"
		rm -f "$ISOLATE_HOME/jobs/$id"/output.log*
		printf '     run %d: baseline %s ms, isolate %s ms\n' "$r" "${base[-1]}" "${iso[-1]}"
	done
	read -r b_med b_min <<<"$(stats "${base[@]}")"
	read -r i_med i_min <<<"$(stats "${iso[@]}")"
	b_mibs=$(awk -v t="$b_med" 'BEGIN { printf "%.0f", 1024000 / t }')
	i_mibs=$(awk -v t="$i_med" 'BEGIN { printf "%.0f", 1024000 / t }')
	ratio=$(awk -v b="$b_med" -v i="$i_med" 'BEGIN { printf "%.2f", b / i }')
	m=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.8) ? "true" : "false" }')
	rows+=("log 1 GiB, --bg until wait returns ($fstype)|$i_mibs MiB/s = ${ratio}x|>= 0.8x|cat $b_mibs MiB/s|$(verdict "$m")")
	emit log_ratio "$ratio" x ">= 0.8" 1 "$m" \
		",\"isolate_mib_s\":$i_mibs,\"baseline_mib_s\":$b_mibs,\"isolate_min_ms\":$i_min,\"baseline_min_ms\":$b_min,\"isolate_ms\":$(json_array "${iso[@]}"),\"baseline_ms\":$(json_array "${base[@]}")"
	printf '\n'
fi

if ((${#rows[@]} > 0)); then
	printf '%-46s  %-30s  %-9s  %-22s  %s\n' measurement value target baseline verdict
	for row in "${rows[@]}"; do
		IFS='|' read -r name value target baseline v <<<"$row"
		printf '%-46s  %-30s  %-9s  %-22s  %s\n' "$name" "$value" "$target" "$baseline" "$v"
	done
fi
