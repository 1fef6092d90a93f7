#!/usr/bin/env bash
# bench/worktree.sh: time a full worktree round trip, plain git against isolate.
#
#   baseline: git worktree add -q -b bench/<n> <dir> HEAD
#             && git worktree remove --force <dir> && git branch -q -D bench/<n>
#   isolate:  ISOLATE_HOME=<state> isolate run --worktree -q -- true
#   reflink:  cp -a --reflink=always <checkout> <dir> && rm -rf <dir>   (with --reflink only)
#
# --objects "packed loose" repeats every size with the objects packed and loose. --reflink runs
# everything inside a btrfs image loop-mounted under the scratch dir and adds the copy-on-write
# row: a copy of a checkout made once, as tools that clone a template do.
#
# For each size it generates a throwaway repository with that many files, runs
# one warm-up of each flow, then alternates them (A B A B ...) --runs times, and
# prints the median and minimum wall time of each plus the ratio isolate/baseline
# (target: <= 0.35). A missed target is not an error: this is a benchmark.
# See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/worktree.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate under the
                   repository root, built with `cargo build --release` if missing)
  --sizes "N ..."  repository sizes in files (default: "2000 50000")
  --runs N         timed runs of each flow per size (default: 5)
  --objects "K ..." object layouts, each of packed and loose (default: "packed")
  --reflink        run inside a loop-mounted btrfs image (made here; needs root,
                   mkfs.btrfs and a free loop device) and add the reflink row
  --out FILE       also write one JSON object per size to FILE (overwritten)
  --no-hyperfine   time with the built-in loop even if hyperfine is installed
  -h, --help       show this help
EOF
}

isolate=""
sizes="2000 50000"
runs=5
out=""
use_hyperfine=1
objects="packed"
reflink=0

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--isolate=*) isolate=${1#*=}; shift ;;
	--sizes) (($# >= 2)) || die "--sizes needs a value"; sizes=$2; shift 2 ;;
	--sizes=*) sizes=${1#*=}; shift ;;
	--runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
	--runs=*) runs=${1#*=}; shift ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	--no-hyperfine) use_hyperfine=0; shift ;;
	--objects) (($# >= 2)) || die "--objects needs a value"; objects=$2; shift 2 ;;
	--objects=*) objects=${1#*=}; shift ;;
	--reflink) reflink=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done

need_positive --runs "$runs"
read -r -a size_list <<<"$sizes"
((${#size_list[@]} > 0)) || die "--sizes is empty"
for s in "${size_list[@]}"; do
	[[ $s =~ ^[1-9][0-9]*$ ]] || die "--sizes must hold positive integers, got '$s'"
done

read -r -a object_list <<<"$objects"
((${#object_list[@]} > 0)) || die "--objects is empty"
for o in "${object_list[@]}"; do
	[[ $o == packed || $o == loose ]] || die "--objects takes packed and loose, got '$o'"
done
command -v git >/dev/null || die "git not found"
command -v perl >/dev/null || die "perl not found (used to generate the test repositories)"

# Paths given on the command line are relative to the caller's directory;
# everything below runs from inside the generated repositories.
find_isolate
open_out

pick_timer

make_work

# --reflink: the whole run inside a btrfs image, so that the copy-on-write row and the two others
# see the same filesystem. The image is sparse, in the scratch dir, removed on exit.
mnt=""
if ((reflink)); then
	command -v mkfs.btrfs >/dev/null || die "--reflink needs mkfs.btrfs (apt-get install -y btrfs-progs)"
	truncate -s 16G "$work/btrfs.img"
	mkfs.btrfs -q -f "$work/btrfs.img" >/dev/null || die "mkfs.btrfs failed"
	mkdir -p "$work/mnt"
	mount -o loop "$work/btrfs.img" "$work/mnt" ||
		die "cannot loop-mount the btrfs image (root and a free loop device are needed)"
	mnt="$work/mnt"
	cleanup() {
		cd /
		umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
		work=$outer
		remove_work
	}
	outer=$work
	work="$mnt/scratch"
	mkdir -p "$work"
fi

# Hermetic git: no user or system config, no stray repository variables.
hermetic_git

# Each run_* sets LAST_MS to the wall time of one round trip, in ms.
LAST_MS=""
seq_no=0

hyperfine_once() {
	local json="$work/hyperfine.json"
	if ! hyperfine --runs 1 --style none --export-json "$json" "$1" >/dev/null; then
		die "command failed under hyperfine (rerun with --no-hyperfine to see its output): $1"
	fi
	LAST_MS=$(sed -n 's/^ *"mean": *\([0-9.eE+-]*\),*$/\1/p' "$json" | head -n 1)
	[[ -n $LAST_MS ]] || die "could not read the time from $json"
	LAST_MS=$(awk -v s="$LAST_MS" 'BEGIN { printf "%.3f", s * 1000 }')
}

run_baseline() {
	seq_no=$((seq_no + 1))
	local br="bench/$seq_no" wt="$work/wt/bench-$seq_no"
	if ((use_hyperfine)); then
		local cmd
		printf -v cmd 'git worktree add -q -b %q %q HEAD && git worktree remove --force %q && git branch -q -D %q' \
			"$br" "$wt" "$wt" "$br"
		hyperfine_once "$cmd"
	else
		local t0
		stamp
		t0=$NOW
		git worktree add -q -b "$br" "$wt" HEAD || die "git worktree add failed"
		git worktree remove --force "$wt" || die "git worktree remove failed"
		git branch -q -D "$br" || die "git branch -D failed"
		stamp
		LAST_MS=$(ms_between "$t0" "$NOW")
	fi
}

run_reflink() {
	seq_no=$((seq_no + 1))
	local dst="$work/wt/copy-$seq_no"
	if ((use_hyperfine)); then
		local cmd
		printf -v cmd 'cp -a --reflink=always %q %q && rm -rf %q' "$template" "$dst" "$dst"
		hyperfine_once "$cmd"
	else
		local t0
		stamp
		t0=$NOW
		cp -a --reflink=always "$template" "$dst" || die "cp --reflink=always failed"
		rm -rf "$dst" || die "rm -rf of the copy failed"
		stamp
		LAST_MS=$(ms_between "$t0" "$NOW")
	fi
}

run_isolate() {
	local state=$1
	if ((use_hyperfine)); then
		local cmd
		printf -v cmd 'ISOLATE_HOME=%q %q run --worktree -q -- true' "$state" "$isolate"
		hyperfine_once "$cmd"
	else
		local t0
		stamp
		t0=$NOW
		ISOLATE_HOME="$state" "$isolate" run --worktree -q -- true || die "isolate run --worktree failed"
		stamp
		LAST_MS=$(ms_between "$t0" "$NOW")
	fi
}

printf 'git %s, %s CPUs, timer: %s, %d runs per flow after 1 warm-up\n' \
	"$(git_version)" "$(cpus '?')" "$timer" "$runs"
fstype=$(statfs_type "$work")
# The issue's goal: the round trip at most 0.35x of git's (bench/README.md).
target=0.35
printf 'isolate: %s\n' "$isolate"
printf 'scratch: %s (%s; set TMPDIR to move it)\n\n' "$work" "$fstype"

rows=()
for layout in "${object_list[@]}"; do
for size in "${size_list[@]}"; do
	repo="$work/repo-$size"
	state="$work/state-$size"
	mkdir -p "$state" "$work/wt"

	stamp
	t0=$NOW
	generate "$repo" "$size" "$layout"
	stamp
	gen_ms=$(ms_between "$t0" "$NOW")
	gen_s=$(awk -v ms="$gen_ms" 'BEGIN { printf "%.2f", ms / 1000 }')
	printf 'size %d, %s objects: generated in %s s\n' "$size" "$layout" "$gen_s"

	cd "$repo"
	if ((reflink)); then
		# The template: a checkout of HEAD made once, copied whole (its .git file included).
		template="$work/template-$size"
		git worktree add -q --detach "$template" HEAD || die "git worktree add of the template failed"
	fi
	run_baseline
	run_isolate "$state"
	((reflink)) && run_reflink
	base=()
	iso=()
	copy=()
	for ((i = 1; i <= runs; i++)); do
		run_baseline
		base+=("$LAST_MS")
		run_isolate "$state"
		iso+=("$LAST_MS")
		if ((reflink)); then
			run_reflink
			copy+=("$LAST_MS")
		fi
	done
	if ((reflink)); then
		git worktree remove --force "$template" || die "git worktree remove of the template failed"
	fi

	# What the isolate runs must not leave behind.
	branches=$(git for-each-ref --format='%(refname:short)' 'refs/heads/isolate/' | wc -l)
	other_refs=$(git for-each-ref --format='%(refname)' | grep -c 'isolate' || true)
	worktrees=$(($(git worktree list --porcelain | grep -c '^worktree ') - 1))
	leftover_dirs=$(find "$state" -name .git -prune -print | wc -l)
	dirty=$(git status --porcelain | wc -l)
	if ((branches > 0)); then
		warn "size $size: $branches isolate/* branch(es) left in the repository"
	fi
	if ((other_refs > branches)); then
		printf 'size %d: note: %d other ref(s) naming isolate remain\n' "$size" $((other_refs - branches))
	fi
	if ((worktrees > 0)); then
		warn "size $size: $worktrees git worktree(s) still registered"
	fi
	if ((leftover_dirs > 0)); then
		warn "size $size: $leftover_dirs worktree director(y/ies) left under ISOLATE_HOME ($state)"
	fi
	if ((dirty > 0)); then
		warn "size $size: the repository's working tree is no longer clean ($dirty entries)"
	fi
	cd "$work"

	read -r b_med b_min <<<"$(stats "${base[@]}")"
	read -r i_med i_min <<<"$(stats "${iso[@]}")"
	ratio=$(awk -v i="$i_med" -v b="$b_med" 'BEGIN { printf "%.2f", (b > 0) ? i / b : 0 }')
	met=$(awk -v r="$ratio" -v t="$target" 'BEGIN { print (r <= t) ? "true" : "false" }')
	c_med=- c_ratio=-
	if ((reflink)); then
		read -r c_med _ <<<"$(stats "${copy[@]}")"
		c_ratio=$(awk -v i="$i_med" -v c="$c_med" 'BEGIN { printf "%.2f", (c > 0) ? i / c : 0 }')
	fi
	rows+=("$size $layout $b_med $b_min $i_med $i_min $ratio $met $c_med $c_ratio")
	printf 'size %d, %s: baseline %s ms, isolate %s ms (medians)\n' "$size" "$layout" "$b_med" "$i_med"

	if [[ -n $out ]]; then
		printf '{"size":%d,"objects":"%s","runs":%d,"timer":"%s","fs":"%s","git":"%s","generate_s":%s,"baseline_median_ms":%s,"baseline_min_ms":%s,"isolate_median_ms":%s,"isolate_min_ms":%s,"ratio":%s,"target_ratio":%s,"target_met":%s,"reflink_median_ms":%s,"leftover_branches":%d,"leftover_worktrees":%d,"leftover_dirs":%d,"baseline_ms":%s,"isolate_ms":%s,"reflink_ms":%s}\n' \
			"$size" "$layout" "$runs" "$timer" "$fstype" "$(git_version)" "$gen_s" \
			"$b_med" "$b_min" "$i_med" "$i_min" "$ratio" "$target" "$met" \
			"$([[ $c_med == - ]] && echo null || echo "$c_med")" \
			"$branches" "$worktrees" "$leftover_dirs" \
			"$(json_array "${base[@]}")" "$(json_array "${iso[@]}")" "$(json_array "${copy[@]}")" >>"$out"
	fi

	chmod -R u+w "$repo" "$state" 2>/dev/null || true
	rm -rf "$repo" "$state"
done
done

printf '\n%8s  %7s  %12s  %12s  %12s  %12s  %6s  %-14s' \
	size objects "baseline med" "baseline min" "isolate med" "isolate min" ratio "target <= $target"
((reflink)) && printf '  %12s  %s' "reflink med" "isolate/reflink"
printf '\n'
for row in "${rows[@]}"; do
	read -r size layout b_med b_min i_med i_min ratio met c_med c_ratio <<<"$row"
	if [[ $met == true ]]; then verdict=met; else verdict=missed; fi
	printf '%8s  %7s  %9s ms  %9s ms  %9s ms  %9s ms  %6s  %-14s' \
		"$size" "$layout" "$b_med" "$b_min" "$i_med" "$i_min" "$ratio" "$verdict"
	((reflink)) && printf '  %9s ms  %s' "$c_med" "${c_ratio}x"
	printf '\n'
done
