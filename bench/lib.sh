# shellcheck shell=bash
# bench/lib.sh: shell code shared by the benchmark scripts in bench/. Not run on its own: each
# script sources it with `. "$(dirname "$0")/lib.sh"` right after `set -euo pipefail`.
#
# Globals the scripts set and these functions read: isolate, out, use_hyperfine, work.
# Globals these functions set: root, isolate, src_isolate, out, timer, work, NOW, ORDER,
# LAST_MS, STATS_DECIMALS.

# root: the repository root (bench/..).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# die MESSAGE...: print an error prefixed with the script's name and exit 1.
die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# warn MESSAGE...: print a warning prefixed with the script's name.
warn() {
	printf '%s: warning: %s\n' "${0##*/}" "$*" >&2
}

# need_positive OPTION VALUE: die unless VALUE is a positive integer.
need_positive() {
	[[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got '$2'"
}

# find_isolate: make $isolate (--isolate, relative to the caller's directory) absolute and check
# it, or default it to target/release/isolate, built with cargo build --release if missing.
find_isolate() {
	if [[ -n $isolate ]]; then
		[[ $isolate == /* ]] || isolate="$PWD/$isolate"
		[[ -x $isolate && ! -d $isolate ]] || die "--isolate $isolate is not an executable file"
	else
		isolate="$root/target/release/isolate"
		if [[ ! -x $isolate ]]; then
			printf 'building %s (cargo build --release)...\n' "$isolate" >&2
			(cd "$root" && cargo build --release) || die "cargo build --release failed"
			[[ -x $isolate ]] || die "cargo build --release did not produce $isolate"
		fi
	fi
}

# open_out: make $out (--out, relative to the caller's directory) absolute and truncate it.
open_out() {
	if [[ -n $out ]]; then
		[[ $out == /* ]] || out="$PWD/$out"
		: >"$out" || die "cannot write $out"
	fi
}

# pick_timer: clear use_hyperfine if hyperfine is not installed; timer is "hyperfine" or "loop".
pick_timer() {
	if ((use_hyperfine)) && ! command -v hyperfine >/dev/null; then
		use_hyperfine=0
	fi
	# shellcheck disable=SC2034 # timer is read by the scripts that source this file
	if ((use_hyperfine)); then timer=hyperfine; else timer=loop; fi
}

# make_work: work is a new scratch directory under $TMPDIR, removed on exit by cleanup; INT and
# TERM exit with 130 and 143.
make_work() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/isolate-bench.XXXXXX")
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# normalize_work: work as pwd spells it (no doubled or trailing slashes from $TMPDIR).
normalize_work() {
	work=$(cd "$work" && pwd)
}

# remove_work: delete the scratch directory, read-only parts included.
remove_work() {
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}

# cleanup: the EXIT trap; a script with more to clean up defines its own after sourcing this.
cleanup() {
	remove_work
}

# fs_type DIR: the type of the filesystem DIR is on. findmnt names ext4 as such (stat -f says
# "ext2/ext3" for every ext filesystem); with mounts stacked on one point it prints one line
# each, the last is the one in use.
fs_type() {
	{ findmnt -n -o FSTYPE -T "$1" 2>/dev/null || stat -f -c %T "$1" 2>/dev/null ||
		echo unknown; } | tail -n 1
}

# statfs_type DIR: the filesystem type as stat -f names it (what bench/worktree.sh reports).
statfs_type() {
	stat -f -c %T "$1" 2>/dev/null || echo unknown
}

# copy_isolate: copy the binary under test to $work/bin, so that a rebuild during the run does
# not change it; src_isolate is the original path, isolate the copy. The pre-exec helper built
# beside it (isolate-sandbox-exec) comes too, as `cargo install` puts it; without it isolate
# runs itself as the helper.
copy_isolate() {
	mkdir -p "$work/bin"
	cp "$isolate" "$work/bin/isolate" || die "cannot copy $isolate"
	local helper
	helper="$(dirname "$isolate")/isolate-sandbox-exec"
	if [[ -x $helper ]]; then
		cp "$helper" "$work/bin/isolate-sandbox-exec" || die "cannot copy $helper"
	fi
	# shellcheck disable=SC2034 # src_isolate is read by the scripts that source this file
	src_isolate=$isolate
	isolate="$work/bin/isolate"
}

# unset_isolate_env: drop isolate's and XDG variables inherited from the caller (or from a job
# this script might run in), ISOLATE_HOME included.
unset_isolate_env() {
	unset ISOLATE_HOME ISOLATE_LOG_MAX ISOLATE_PORT ISOLATE_PORT_RANGE ISOLATE_LANDLOCK_ABI_MAX \
		ISOLATE_SANDBOX_PLAN ISOLATE_JOB ISOLATE_WORKTREE ISOLATE_BRANCH ISOLATE_BASE ISOLATE_REPO \
		XDG_CONFIG_HOME XDG_STATE_HOME
}

# hermetic_git: no user or system git config and no stray repository variables: HOME is
# $work/home, with a gitconfig written here; author and committer dates are fixed.
hermetic_git() {
	unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY \
		GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_COMMON_DIR GIT_NAMESPACE GIT_CEILING_DIRECTORIES
	export HOME="$work/home"
	export GIT_CONFIG_GLOBAL="$HOME/gitconfig"
	export GIT_CONFIG_NOSYSTEM=1
	export GIT_AUTHOR_DATE="2024-01-01T00:00:00Z" GIT_COMMITTER_DATE="2024-01-01T00:00:00Z"
	mkdir -p "$HOME"
	cat >"$GIT_CONFIG_GLOBAL" <<'EOF'
[user]
	name = isolate bench
	email = bench@isolate.invalid
[init]
	defaultBranch = main
[core]
	autocrlf = false
[gc]
	auto = 0
[maintenance]
	auto = false
[advice]
	detachedHead = false
EOF
}

# generate DIR N [OBJECTS]: a repository with N files, ~100 per directory, two levels of nesting
# (mDDD/pDD/fDD.rs), 200-500 bytes each, deterministic and all distinct. One commit, then
# packed, as a real clone would be; OBJECTS "loose" leaves every object loose instead, as in a
# repository whose history was made locally and never gc'd. Last, as in a checkout someone works
# in, its index is refreshed a second after the files were written: otherwise every entry is
# racily clean (its file's mtime is the index's second) and every `git status` in the project,
# which cannot write the index back without its lock, hashes every file again.
generate() {
	local dir=$1 n=$2 objects=${3:-packed}
	mkdir -p "$dir"
	git -C "$dir" init -q
	(cd "$dir" && perl -e '
		use strict; use warnings; use File::Path qw(make_path);
		my $n = shift; my %made;
		for my $i (0 .. $n - 1) {
			my $d = int($i / 100);
			my $sub = sprintf("m%03d/p%02d", int($d / 16), $d % 16);
			make_path($sub) unless $made{$sub}++;
			my $want = 200 + ($i * 37) % 300;
			my $x = $i + 1;
			my $body = "// bench file $i ($sub)\n";
			my $k = 0;
			while (length($body) < $want) {
				$x = ($x * 1103515245 + 12345) % 2147483648;
				$body .= sprintf("pub const V%d_%d: u32 = %d;\n", $i, $k++, $x);
			}
			my $path = sprintf("%s/f%02d.rs", $sub, $i % 100);
			open(my $fh, ">", $path) or die "$path: $!";
			print $fh $body;
			close($fh) or die "$path: $!";
		}
	' "$n")
	printf 'bench repository, %d files\n' "$n" >"$dir/README"
	git -C "$dir" add -A
	git -C "$dir" commit -q -m "bench: $n files"
	if [[ $objects != loose ]]; then
		git -C "$dir" repack -a -d -q
		git -C "$dir" prune-packed
	fi
	sleep 1
	git -C "$dir" status --porcelain >/dev/null
}

# cpus FALLBACK: the number of CPUs, or FALLBACK if nproc fails.
cpus() {
	nproc 2>/dev/null || echo "$1"
}

# git_version: git's version number, e.g. 2.43.0.
git_version() {
	git --version | awk '{print $3}'
}

# stamp: set NOW to the wall clock in ns. Without a fork where bash has EPOCHREALTIME
# (bash >= 5, microseconds), else with date +%s%N.
NOW=0
stamp() {
	if [[ -n ${EPOCHREALTIME:-} ]]; then
		NOW=${EPOCHREALTIME//[.,]/}000
	else
		NOW=$(date +%s%N)
	fi
}

# ms_between START_NS END_NS: elapsed milliseconds, three decimals.
ms_between() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'
}

# time_once CMD: LAST_MS is the wall time of one run of CMD, in ms. CMD is one simple command,
# words quoted as by printf %q, run without a shell in between (hyperfine -N, or eval here).
LAST_MS=""
time_once() {
	if ((use_hyperfine)); then
		local csv="$work/hyperfine.csv"
		hyperfine -N --runs 1 --style none --command-name x --export-csv "$csv" "$1" \
			>/dev/null 2>"$work/hyperfine.err" ||
			die "command failed under hyperfine: $1 ($(tr '\n' ' ' <"$work/hyperfine.err"))"
		LAST_MS=$(awk -F, 'NR == 2 { printf "%.3f", $2 * 1000 }' "$csv")
		[[ -n $LAST_MS ]] || die "could not read the time from $csv"
	else
		local t0
		stamp
		t0=$NOW
		eval "$1" </dev/null >/dev/null 2>&1 || die "command failed: $1"
		stamp
		LAST_MS=$(ms_between "$t0" "$NOW")
	fi
}

# shuffle N: ORDER is 0 .. N-1 in a new random order (Fisher-Yates; $RANDOM is seeded, so
# every run of a script uses the same sequence of orders). A fixed or rotating order would let
# one command always run right after another, and a kernel cost that depends on what ran just
# before (cgroup migration waits for an RCU grace period unless one just passed) would then hit
# the commands unevenly.
ORDER=()
RANDOM=1
shuffle() {
	local j k t
	ORDER=()
	for ((k = 0; k < $1; k++)); do
		ORDER[k]=$k
	done
	for ((k = $1 - 1; k > 0; k--)); do
		j=$((RANDOM % (k + 1)))
		t=${ORDER[k]}
		ORDER[k]=${ORDER[j]}
		ORDER[j]=$t
	done
}

# stats LIST...: "median min" of the numbers given, with STATS_DECIMALS decimals (default 1).
STATS_DECIMALS=1
stats() {
	printf '%s\n' "$@" | sort -g | awk -v d="$STATS_DECIMALS" '
		{ v[NR] = $1 }
		END {
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			f = "%." d "f"
			printf f " " f, m, v[1]
		}'
}

# json_array ITEM...: the items as a JSON array, [a,b,c] (numbers, or already JSON).
json_array() {
	local IFS=,
	printf '[%s]' "$*"
}
