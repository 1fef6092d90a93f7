#!/usr/bin/env bash
# bench/merge.sh: fan-in of many clean jobs, isolate merge --all against the same merges by hand.
#
#   baseline: for each job branch, oldest first: git merge --no-ff -q --no-edit isolate/<id>
#   isolate:  isolate merge --all --yes
#
# It generates a repository of --files files, runs --jobs jobs in it (each commits one file of its
# own; their worktrees are removed when they end, the normal case), then alternates the two
# fan-ins --runs times, resetting the project branch to where it was before each, and prints
# the median of each and the ratio isolate/baseline (target: <= 1.2). A missed target is not an
# error: this is a benchmark. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/merge.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate under the
                   repository root, built with `cargo build --release` if missing)
  --files N        files in the project (default: 20000)
  --jobs N         jobs to merge (default: 50)
  --runs N         timed runs of each fan-in (default: 3)
  --out FILE       also write one JSON object to FILE (overwritten)
  -h, --help       show this help
EOF
}

isolate=""
files=20000
jobs=50
runs=3
out=""
# shellcheck disable=SC2034 # read by pick_timer in lib.sh; this script times with its own loop
use_hyperfine=0

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--isolate=*) isolate=${1#*=}; shift ;;
	--files) (($# >= 2)) || die "--files needs a value"; files=$2; shift 2 ;;
	--files=*) files=${1#*=}; shift ;;
	--jobs) (($# >= 2)) || die "--jobs needs a value"; jobs=$2; shift 2 ;;
	--jobs=*) jobs=${1#*=}; shift ;;
	--runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
	--runs=*) runs=${1#*=}; shift ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done
need_positive --files "$files"
need_positive --jobs "$jobs"
need_positive --runs "$runs"

find_isolate
open_out
make_work
normalize_work
copy_isolate
unset_isolate_env
hermetic_git
export ISOLATE_HOME="$work/state"

repo="$work/repo"
stamp
t0=$NOW
generate "$repo" "$files"
cd "$repo"
start=$(git rev-parse HEAD)
branches=()
for ((j = 0; j < jobs; j++)); do
	id=$("$isolate" run --bg --worktree -- sh -c \
		"echo job $j > job-$j.txt && git add job-$j.txt && git commit -q -m 'job $j'")
	"$isolate" wait "$id" >/dev/null
	branches+=("isolate/$id")
done
stamp
printf 'git %s, %s CPUs; %d files, %d jobs made in %s s\n' "$(git_version)" "$(cpus '?')" \
	"$files" "$jobs" "$(awk -v ms="$(ms_between "$t0" "$NOW")" 'BEGIN { printf "%.1f", ms / 1000 }')"

run_baseline() {
	git reset -q --hard "$start"
	stamp
	local t0=$NOW b
	for b in "${branches[@]}"; do
		git merge --no-ff -q --no-edit "$b" >/dev/null || die "git merge $b failed"
	done
	stamp
	LAST_MS=$(ms_between "$t0" "$NOW")
}

run_isolate() {
	git reset -q --hard "$start"
	stamp
	local t0=$NOW
	"$isolate" merge --all --yes >/dev/null 2>"$work/merge.err" ||
		die "isolate merge --all failed: $(tail -n 3 "$work/merge.err")"
	stamp
	LAST_MS=$(ms_between "$t0" "$NOW")
	local merges
	merges=$(git rev-list --count --merges "$start..HEAD")
	((merges == jobs)) || die "isolate merge --all made $merges merges, not $jobs"
}

base=()
iso=()
for ((i = 1; i <= runs; i++)); do
	run_baseline
	base+=("$LAST_MS")
	run_isolate
	iso+=("$LAST_MS")
done

read -r b_med b_min <<<"$(stats "${base[@]}")"
read -r i_med i_min <<<"$(stats "${iso[@]}")"
ratio=$(awk -v i="$i_med" -v b="$b_med" 'BEGIN { printf "%.2f", (b > 0) ? i / b : 0 }')
met=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.2) ? "true" : "false" }')
printf 'git merge --no-ff by hand: %s ms (median of %d; min %s)\n' "$b_med" "$runs" "$b_min"
printf 'isolate merge --all:       %s ms (median of %d; min %s)\n' "$i_med" "$runs" "$i_min"
printf 'ratio isolate/baseline: %s (target <= 1.2: %s); per job %s ms vs %s ms\n' "$ratio" "$met" \
	"$(awk -v t="$i_med" -v n="$jobs" 'BEGIN { printf "%.1f", t / n }')" \
	"$(awk -v t="$b_med" -v n="$jobs" 'BEGIN { printf "%.1f", t / n }')"
if [[ -n $out ]]; then
	printf '{"files":%d,"jobs":%d,"runs":%d,"git":"%s","baseline_median_ms":%s,"isolate_median_ms":%s,"ratio":%s,"target_ratio":1.2,"target_met":%s,"baseline_ms":%s,"isolate_ms":%s}\n' \
		"$files" "$jobs" "$runs" "$(git_version)" "$b_med" "$i_med" "$ratio" "$met" \
		"$(json_array "${base[@]}")" "$(json_array "${iso[@]}")" >>"$out"
fi
