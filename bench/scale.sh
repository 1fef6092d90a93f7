#!/usr/bin/env bash
# bench/scale.sh: isolate with many jobs.
#
#   records: `ps --all --json`, `ps --all` and `worktrees --json`, `worktrees` over --records
#            ended jobs (target: each < 50 ms), against `cat` of every record (one process)
#   starts:  --jobs jobs started at once on one project, plain and with --worktree: all must
#            succeed; the median start latency (launch to CMD's first instruction) against a
#            single start's (target: <= 2x); and the same of `timeout 100` and bwrap (if
#            installed) as baselines: what --jobs starts at once cost any launcher here
#
# The records are copies of the record a real `isolate run --worktree -- true` left (its worktree
# removed, as for every clean job), each with its own id. A missed target is not an error: this is
# a benchmark. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/scale.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate, built if missing)
  --records N      ended-job records for the listing part (default: 1000, at most 65536)
  --runs N         timed runs of each listing command (default: 10, after 2 warm-ups)
  --jobs N         jobs started at once (default: 50)
  --singles N      single starts measured one after another, per mode (default: 10)
  --files N        files in the project of the start part (default: 2000)
  --out FILE       also write one JSON object per measurement to FILE (overwritten)
  --skip-records, --skip-starts   leave a part out
  -h, --help       show this help
EOF
}

isolate=""
records=1000
runs=10
jobs=50
singles=10
files=2000
out=""
do_records=1
do_starts=1
use_hyperfine=0

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--records) (($# >= 2)) || die "--records needs a value"; records=$2; shift 2 ;;
	--runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
	--jobs) (($# >= 2)) || die "--jobs needs a value"; jobs=$2; shift 2 ;;
	--singles) (($# >= 2)) || die "--singles needs a value"; singles=$2; shift 2 ;;
	--files) (($# >= 2)) || die "--files needs a value"; files=$2; shift 2 ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--skip-records) do_records=0; shift ;;
	--skip-starts) do_starts=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
for v in records runs jobs singles files; do
	need_positive "--$v" "${!v}"
done
((records <= 65536)) || die "--records is at most 65536"
command -v python3 >/dev/null || die "python3 not found (copies the records)"

find_isolate
open_out
pick_timer
make_work
normalize_work
copy_isolate
unset_isolate_env
hermetic_git
fstype=$(fs_type "$work")
export ISOLATE_HOME="$work/state"
mkdir -p "$ISOLATE_HOME"

printf 'isolate: %s; kernel %s, %s CPUs\n' "$src_isolate" "$(uname -r)" "$(cpus '?')"
printf 'scratch and ISOLATE_HOME: %s (%s; set TMPDIR to move it)\n\n' "$work" "$fstype"

emit() {
	[[ -z $out ]] || printf '%s\n' "$1" >>"$out"
}

# --- 1. listings over many records -----------------------------------------------------------
if ((do_records)); then
	generate "$work/project" 20
	(cd "$work/project" && "$isolate" run --worktree -q -- true </dev/null) ||
		die "isolate run --worktree -- true failed"
	first=$(ls "$ISOLATE_HOME/jobs")
	python3 - "$ISOLATE_HOME/jobs" "$first" "$records" <<'EOF'
import json, os, sys
jobs, first, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
record = json.load(open(os.path.join(jobs, first, "job.json")))
for i in range(n - 1):
    rid = "bench-%04x" % i
    r = dict(record, id=rid)
    if r.get("worktree"):
        r["worktree"] = dict(r["worktree"], branch="isolate/" + rid,
                             path=r["worktree"]["path"].replace(first, rid))
    d = os.path.join(jobs, rid)
    os.mkdir(d)
    with open(os.path.join(d, "job.json"), "w") as f:
        json.dump(r, f, indent=2)
EOF
	listed=$("$isolate" ps --all --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
	((listed == records)) || die "ps --all --json listed $listed records, not $records"
	cat_bin=$(type -P cat)
	printf -v base_cmd '%q %q/jobs/*/job.json' "$cat_bin" "$ISOLATE_HOME"
	labels=("ps --all --json" "ps --all" "worktrees --json" "worktrees" "baseline: cat of every job.json")
	cmds=()
	for l in "${labels[@]:0:4}"; do
		printf -v c '%q %s' "$isolate" "$l"
		cmds+=("$c")
	done
	cmds+=("$base_cmd")
	printf '%-44s  %9s  %9s  %s\n' "over $records records" "median ms" "min ms" "target < 50 ms"
	for i in "${!cmds[@]}"; do
		list=()
		for ((r = -2; r < runs; r++)); do
			time_once "${cmds[i]}"
			((r < 0)) || list+=("$LAST_MS")
		done
		read -r med min <<<"$(STATS_DECIMALS=2 stats "${list[@]}")"
		verdict=$(awk -v m="$med" 'BEGIN { print (m < 50) ? "met" : "missed" }')
		((i == 4)) && verdict=-
		printf '%-44s  %9s  %9s  %s\n' "${labels[i]}" "$med" "$min" "$verdict"
		emit "$(printf '{"bench":"scale","metric":"%s","records":%d,"median_ms":%s,"min_ms":%s,"target":"< 50","fs":"%s","times_ms":%s}' \
			"${labels[i]}" "$records" "$med" "$min" "$fstype" "$(json_array "${list[@]}")")"
	done
	rm -rf "${ISOLATE_HOME:?}/jobs" "$work/project"
	printf '\n'
fi

# --- 2. many starts at once on one project -------------------------------------------------------
# start_one OUT LAUNCHER...: one CMD, started by LAUNCHER (argv up to CMD), that prints its first
# instant (ns); OUT gets "launch cmd rc".
start_one() {
	local out=$1 t0 t1 rc=0
	shift
	stamp
	t0=$NOW
	t1=$("$@" date +%s%N </dev/null 2>>"$work/errors") || rc=$?
	printf '%s %s %s\n' "$t0" "${t1:-0}" "$rc" >"$out"
}

# latencies FILE...: LAT holds each job's start latency in ms; FAILED the count of failed jobs.
latencies() {
	local f t0 t1 rc
	LAT=()
	FAILED=0
	for f in "$@"; do
		read -r t0 t1 rc <"$f"
		if ((rc != 0)) || ((t1 == 0)); then
			FAILED=$((FAILED + 1))
			continue
		fi
		LAT+=("$(ms_between "$t0" "$t1")")
	done
}

if ((do_starts)); then
	generate "$work/project" "$files"
	cd "$work/project"
	: >"$work/errors"
	printf '%-36s  %5s  %6s  %13s  %13s  %7s  %s\n' "start latency (launch to CMD)" jobs failed \
		"single med ms" "at once med ms" ratio "target <= 2x"
	# The baselines show what starting --jobs processes at once costs any launcher on this machine.
	modes=(plain worktree timeout)
	command -v bwrap >/dev/null && modes+=(bwrap)
	for mode in "${modes[@]}"; do
		case $mode in
		plain) args=("$isolate" run -q --) label="run -q -- date" ;;
		worktree) args=("$isolate" run -q --worktree --) label="run -q --worktree -- date" ;;
		timeout) args=(timeout 100) label="baseline: timeout 100 date" ;;
		bwrap)
			args=(bwrap --ro-bind / / --dev /dev --bind "$PWD" "$PWD" --unshare-pid --die-with-parent)
			label="baseline: bwrap ... date"
			;;
		esac
		start_one "$work/warm" "${args[@]}"
		mkdir -p "$work/s-$mode" "$work/c-$mode"
		for ((i = 0; i < singles; i++)); do
			start_one "$work/s-$mode/$i" "${args[@]}"
		done
		latencies "$work/s-$mode"/*
		read -r single _ <<<"$(stats "${LAT[@]}")"
		single_failed=$FAILED
		pids=()
		for ((i = 0; i < jobs; i++)); do
			start_one "$work/c-$mode/$i" "${args[@]}" &
			pids+=($!)
		done
		wait "${pids[@]}" || true
		latencies "$work/c-$mode"/*
		((${#LAT[@]} > 0)) || die "no job of $jobs started at once succeeded (see $work/errors)"
		read -r many _ <<<"$(stats "${LAT[@]}")"
		ratio=$(awk -v a="$many" -v b="$single" 'BEGIN { printf "%.2f", a / b }')
		verdict=$(awk -v r="$ratio" -v f="$((FAILED + single_failed))" 'BEGIN { print (r <= 2 && f == 0) ? "met" : "missed" }')
		[[ $mode == plain || $mode == worktree ]] || verdict="(baseline)"
		printf '%-36s  %5d  %6d  %13s  %13s  %6sx  %s\n' "$label ($files files)" \
			"$jobs" "$FAILED" "$single" "$many" "$ratio" "$verdict"
		emit "$(printf '{"bench":"scale","metric":"start_latency_%s","jobs":%d,"failed":%d,"single_median_ms":%s,"at_once_median_ms":%s,"ratio":%s,"target":"<= 2","fs":"%s","latencies_ms":%s}' \
			"$mode" "$jobs" "$FAILED" "$single" "$many" "$ratio" "$fstype" "$(json_array "${LAT[@]}")")"
		leftover=$(git for-each-ref --format='%(refname)' 'refs/heads/isolate/' | wc -l)
		((leftover == 0)) || warn "$leftover isolate/* branch(es) left in the project"
	done
	[[ ! -s $work/errors ]] || { warn "errors of the jobs:"; head -n 20 "$work/errors" >&2; }
fi
