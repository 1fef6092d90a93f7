#!/usr/bin/env bash
# bench/probe.sh: the end-of-job clean-up probe on a large worktree, against `git status`.
#
# isolate decides whether a job's worktree holds work by reading the job's repository in-process
# with gix (src/worktree/inspect/). The probe is measured through the binary: `isolate
# worktrees --json` runs it once per kept worktree (plus a few git calls in the project), timed
# against `git -C <worktree> --no-optional-locks status --porcelain`.
#
#   1. Generate a repository with --files files (50,000 by default; as bench/worktree.sh does).
#   2. `isolate run --worktree --keep -q -- true` once: a kept worktree.
#   3. Phase "fresh": right after the checkout. Entries whose files have the index's mtime second
#      are "racily clean": both git and gix must hash them. The script counts them (git's trace2).
#   4. Phase "all racy": the index's mtime set back to before the checkout (touch -m; its
#      content is unchanged), so every entry is racily clean and both must hash every file.
#   5. `git -C <worktree> status` once: it refreshes and rewrites the index.
#   6. Phase "refreshed": no entry is racy any more; a status is lstat() of every file.
#
# Each phase: one warm-up round, then --runs rounds of four commands, in a new random order
# each round:
#   worktrees:  isolate worktrees --json, one kept worktree (the 50,000-file one)
#   git:        git -C <worktree> --no-optional-locks status --porcelain
#   zero:       isolate worktrees --json with no kept worktree (process start, state dir listing)
#   tiny:       isolate worktrees --json with one kept worktree of a 10-file repository (adds the
#               per-worktree git calls in the project and a probe of next to nothing)
# The probe alone is estimated as worktrees - zero and worktrees - tiny. Target: <= 1.0x git
# status. A missed target is not an error: this is a benchmark. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/probe.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate under the
                   repository root, built with `cargo build --release` if missing);
                   copied to the scratch directory before the first run
  --files N        files in the generated repository (default: 50000)
  --runs N         timed runs of each command per phase (default: 10, after 1 warm-up round)
  --out FILE       also write one JSON object per phase to FILE (overwritten)
  --no-hyperfine   time with the built-in loop even if hyperfine is installed
  -h, --help       show this help
EOF
}

isolate=""
files=50000
runs=10
out=""
use_hyperfine=1

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--isolate=*) isolate=${1#*=}; shift ;;
	--files) (($# >= 2)) || die "--files needs a value"; files=$2; shift 2 ;;
	--files=*) files=${1#*=}; shift ;;
	--runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
	--runs=*) runs=${1#*=}; shift ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	--no-hyperfine) use_hyperfine=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done

need_positive --runs "$runs"
need_positive --files "$files"
command -v git >/dev/null || die "git not found"
command -v perl >/dev/null || die "perl not found (used to generate the test repository)"
git_bin=$(type -P git)

find_isolate
open_out

pick_timer

make_work
normalize_work
fstype=$(fs_type "$work")

# The binary under test, copied so that a rebuild during the run does not change it.
copy_isolate

# Hermetic git and isolate: no user or system config, no stray repository or isolate variables,
# a temp HOME; every ISOLATE_HOME is under $work.
unset GIT_OPTIONAL_LOCKS GIT_TRACE2 GIT_TRACE2_PERF GIT_TRACE2_EVENT
unset_isolate_env
hermetic_git

# keep_worktree REPO STATE: one kept worktree of REPO under STATE; its path in KEPT.
KEPT=""
keep_worktree() {
	local json
	(cd "$1" && ISOLATE_HOME=$2 "$isolate" run --worktree --keep -q -- true </dev/null) ||
		die "isolate run --worktree --keep -q -- true failed in $1"
	json=$(ISOLATE_HOME=$2 "$isolate" worktrees --json) || die "isolate worktrees --json failed"
	KEPT=$(sed -n 's/^ *"path": *"\(.*\)",*$/\1/p' <<<"$json" | head -n 1)
	[[ -n $KEPT && -d $KEPT/.git ]] || die "no kept worktree listed by isolate worktrees --json: $json"
	# The probe must have run and found nothing: otherwise the numbers measure something else.
	grep -Eq '"error": *null' <<<"$json" || die "isolate worktrees --json reports an error: $json"
	grep -Eq '"dirty": *0,' <<<"$json" || warn "the kept worktree $KEPT is not clean: $json"
}

# racy WORKTREE: how many index entries git had to re-check with lstat() in its refresh, i.e. the
# racily clean ones it then had to hash ("?" if this git's trace2 does not say).
racy() {
	local n
	n=$(GIT_TRACE2_PERF=1 git -C "$1" --no-optional-locks status --porcelain 2>&1 >/dev/null |
		sed -n 's/.*\.\.refresh\/sum_lstat:\([0-9]*\).*/\1/p' | tail -n 1)
	printf '%s' "${n:-?}"
}

# index_sum WORKTREE: the index's checksum, size and mtime (a rewrite may leave the content as it was).
index_sum() {
	printf '%s %s' "$(cksum <"$1/.git/index")" "$(stat -c %y "$1/.git/index")"
}

# time_in STATE CMD: time_once CMD with ISOLATE_HOME=STATE.
time_in() {
	ISOLATE_HOME=$1 time_once "$2"
}

calc() {
	awk "BEGIN { printf \"$1\", $2 }"
}

printf 'isolate: %s (copied to %s)\n' "$src_isolate" "$isolate"
printf 'git %s, %s CPUs, timer: %s, %d runs per command and phase after 1 warm-up round\n' \
	"$(git_version)" "$(cpus '?')" "$timer" "$runs"
printf 'scratch, repositories, worktrees and ISOLATE_HOME: %s (%s; set TMPDIR to move it)\n' \
	"$work" "$fstype"

stamp
t0=$NOW
generate "$work/repo" "$files"
generate "$work/tiny" 10
stamp
printf 'generated %d files in %s s\n' "$files" "$(calc %.2f "$(ms_between "$t0" "$NOW") / 1000")"

mkdir -p "$work/state-big" "$work/state-zero" "$work/state-tiny"
stamp
created_ns=$NOW
keep_worktree "$work/repo" "$work/state-big"
wt=$KEPT
stamp
printf 'kept worktree in %s s: %s\n' "$(calc %.2f "($NOW - $created_ns) / 1e9")" "$wt"
keep_worktree "$work/tiny" "$work/state-tiny"
zero_json=$(ISOLATE_HOME="$work/state-zero" "$isolate" worktrees --json)
[[ $zero_json == *"[]"* ]] || die "isolate worktrees --json lists worktrees in an empty state dir: $zero_json"
tracked=$(git -C "$wt" ls-files | wc -l)
printf '\n'

names=(worktrees git zero tiny)
states=("$work/state-big" "$work/state-big" "$work/state-zero" "$work/state-tiny")
printf -v c_iso '%q worktrees --json' "$isolate"
printf -v c_git '%q -C %q --no-optional-locks status --porcelain' "$git_bin" "$wt"
cmds=("$c_iso" "$c_git" "$c_iso" "$c_iso")
n_cmds=${#cmds[@]}

rows=()
# phase NAME: time every command --runs times (after a warm-up round) and record the row.
phase() {
	local name=$1 r i before n_racy med min
	local -a times=() list=() meds=() mins=()
	n_racy=$(racy "$wt")
	before=$(index_sum "$wt")
	printf 'phase %s: %s of %d index entries racily clean ...\n' "$name" "$n_racy" "$tracked"
	for ((r = 0; r <= runs; r++)); do
		shuffle "$n_cmds"
		for i in "${ORDER[@]}"; do
			time_in "${states[i]}" "${cmds[i]}"
			((r == 0)) || times[i]+=" $LAST_MS"
		done
	done
	[[ $(index_sum "$wt") == "$before" ]] || warn "phase $name: the worktree's index changed during the runs"
	local json_times=""
	for ((i = 0; i < n_cmds; i++)); do
		read -r -a list <<<"${times[i]}"
		read -r med min <<<"$(stats "${list[@]}")"
		meds[i]=$med
		mins[i]=$min
		json_times+=",\"${names[i]}_median_ms\":$med,\"${names[i]}_min_ms\":$min,\"${names[i]}_ms\":$(json_array "${list[@]}")"
	done
	local ratio ratio_min probe_zero probe_tiny r_zero r_tiny met
	ratio=$(calc %.2f "${meds[0]} / ${meds[1]}")
	ratio_min=$(calc %.2f "${mins[0]} / ${mins[1]}")
	probe_zero=$(calc %.1f "${meds[0]} - ${meds[2]}")
	probe_tiny=$(calc %.1f "${meds[0]} - ${meds[3]}")
	r_zero=$(calc %.2f "$probe_zero / ${meds[1]}")
	r_tiny=$(calc %.2f "$probe_tiny / ${meds[1]}")
	met=$(awk -v r="$ratio" 'BEGIN { print (r <= 1.0) ? "true" : "false" }')
	rows+=("$name|$n_racy|${meds[0]}|${mins[0]}|${meds[1]}|${mins[1]}|${meds[2]}|${meds[3]}|$ratio|$ratio_min|$probe_zero|$r_zero|$probe_tiny|$r_tiny|$met")
	if [[ -n $out ]]; then
		printf '{"bench":"probe","phase":"%s","files":%d,"tracked":%d,"racy":"%s","runs":%d,"timer":"%s","fs":"%s","cpus":%s,"git":"%s","ratio":%s,"min_ratio":%s,"probe_minus_zero_ms":%s,"probe_minus_zero_ratio":%s,"probe_minus_tiny_ms":%s,"probe_minus_tiny_ratio":%s,"target":"<= 1.0","target_met":%s%s}\n' \
			"$name" "$files" "$tracked" "$n_racy" "$runs" "$timer" "$fstype" \
			"$(cpus null)" "$(git_version)" \
			"$ratio" "$ratio_min" "$probe_zero" "$r_zero" "$probe_tiny" "$r_tiny" "$met" "$json_times" >>"$out"
	fi
}

phase fresh

# Every entry racily clean: the index's mtime before every file's (the second the checkout began).
touch -m -d "@$((created_ns / 1000000000 - 1))" "$wt/.git/index"
phase all-racy

# One plain git status refreshes the index and writes it back: nothing is racy afterwards.
before=$(index_sum "$wt")
git -C "$wt" status >/dev/null
[[ $(index_sum "$wt") != "$before" ]] || warn "git status did not rewrite the index"
phase refreshed

printf '\n%-10s %12s  %17s  %18s  %6s  %6s  %13s  %14s  %14s  %s\n' \
	phase "racy entries" "worktrees med/min" "git status med/min" zero tiny \
	"ratio med/min" "probe-zero" "probe-tiny" "target <= 1.0x"
for row in "${rows[@]}"; do
	IFS='|' read -r name n_racy w_med w_min g_med g_min z_med t_med ratio ratio_min pz rz pt rt met <<<"$row"
	if [[ $met == true ]]; then verdict=met; else verdict=missed; fi
	printf '%-10s %12s  %17s  %18s  %6s  %6s  %13s  %14s  %14s  %s\n' \
		"$name" "$n_racy" "$w_med / $w_min" "$g_med / $g_min" "$z_med" "$t_med" \
		"${ratio}x / ${ratio_min}x" "$pz (${rz}x)" "$pt (${rt}x)" "$verdict"
done
printf '(times in ms; ratio = worktrees / git status; probe-zero, probe-tiny: worktrees minus that\n'
printf ' fixed overhead, and its ratio to git status)\n'
