#!/usr/bin/env bash
# bench/launch.sh: what a sandboxed launch costs, against other ways to start `true`.
#
#   isolate:     isolate run -q -- true                  (no worktree; Landlock and seccomp)
#   no-sandbox:  isolate run -q --no-sandbox -- true     (the same without the sandbox)
#   env-seccomp: env isolate run -q --policy BE -- true  (BE: default, seccomp best effort)
#   env-no-seccomp: env ISOLATE_NO_SECCOMP=1 isolate run -q --policy BE -- true
#                (the same without the seccomp layer; both rows pay env(1)'s exec, so their
#                difference is the layer's own cost: building and installing the filter, handing
#                over its listener, starting the broker; target <= 0.3 ms)
#   bwrap:       bwrap --ro-bind / / --dev /dev --bind DIR DIR --unshare-pid true
#   timeout:     timeout 100 true
#   true:        true
#
# One warm-up round, then --runs rounds; each round runs every command once, in a new random
# order, so that drift in machine load and what ran just before hit all of them alike. Prints the
# median and minimum of each, the ratios isolate/bwrap (target: <= 1.0) and isolate/timeout, and
# the sandbox's own share (isolate - no-sandbox) and the seccomp layer's (env-seccomp -
# env-no-seccomp). A missed target is not an error: this is a benchmark. See bench/README.md.
set -euo pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	cat <<'EOF'
Usage: bench/launch.sh [options]

  --isolate PATH   isolate binary (default: target/release/isolate under the
                   repository root, built with `cargo build --release` if missing);
                   copied to the scratch directory before the first run
  --runs N         timed runs of each command (default: 50, after 1 warm-up round)
  --out FILE       also write one JSON object per measurement to FILE (overwritten)
  --no-bwrap       leave the bwrap row out
  --no-hyperfine   time with the built-in loop even if hyperfine is installed
  -h, --help       show this help
EOF
}

isolate=""
runs=50
out=""
use_hyperfine=1
use_bwrap=1

while (($# > 0)); do
	case $1 in
	--isolate) (($# >= 2)) || die "--isolate needs a value"; isolate=$2; shift 2 ;;
	--isolate=*) isolate=${1#*=}; shift ;;
	--runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
	--runs=*) runs=${1#*=}; shift ;;
	--out) (($# >= 2)) || die "--out needs a value"; out=$2; shift 2 ;;
	--out=*) out=${1#*=}; shift ;;
	--no-bwrap) use_bwrap=0; shift ;;
	--no-hyperfine) use_hyperfine=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument: $1" ;;
	esac
done

need_positive --runs "$runs"
true_bin=$(type -P true) || die "no true(1) executable in PATH"
timeout_bin=$(type -P timeout) || die "no timeout(1) executable in PATH"

find_isolate
open_out

pick_timer

make_work
normalize_work
fstype=$(fs_type "$work")

# The binary under test, copied so that a rebuild during the run does not change it.
copy_isolate
mkdir -p "$work/cwd" "$work/state" "$work/home"

# Never the user's state or configuration: a temp ISOLATE_HOME and HOME, no isolate variables
# inherited from a job this script might run in.
unset_isolate_env
export ISOLATE_HOME="$work/state"
export HOME="$work/home"
export GIT_CONFIG_GLOBAL="$HOME/gitconfig" GIT_CONFIG_NOSYSTEM=1
: >"$GIT_CONFIG_GLOBAL"
cd "$work/cwd"

# The commands, each one simple command (words quoted as by printf %q) run without a shell in
# between: by hyperfine -N, or directly from this shell in the built-in loop.
printf 'extends = "default"\n[compatibility]\nseccomp = "best_effort"\n' >"$work/best-effort.toml"
names=(isolate no-sandbox env-seccomp env-no-seccomp)
labels=("isolate run -q -- true" "isolate run -q --no-sandbox -- true"
	"env isolate run -q --policy BE -- true" "env ISOLATE_NO_SECCOMP=1 isolate run -q --policy BE -- true")
env_bin=$(type -P env) || die "no env(1) executable in PATH"
printf -v c1 '%q run -q -- true' "$isolate"
printf -v c2 '%q run -q --no-sandbox -- true' "$isolate"
printf -v c6 '%q %q run -q --policy %q -- true' "$env_bin" "$isolate" "$work/best-effort.toml"
printf -v c7 '%q ISOLATE_NO_SECCOMP=1 %q run -q --policy %q -- true' "$env_bin" "$isolate" "$work/best-effort.toml"
cmds=("$c1" "$c2" "$c6" "$c7")

# The sandbox has to be in force for the first row to mean anything.
"$isolate" run -q --report "$work/report.json" -- true </dev/null ||
	die "isolate run -q -- true failed (exit $?); is Landlock available? (isolate doctor)"
if ! grep -Eq '"enforced": *true' "$work/report.json"; then
	die "isolate ran true without enforcing its sandbox; see $src_isolate doctor"
fi
abi=$(sed -n 's/^ *"landlock_abi": *\([0-9]*\).*/\1/p' "$work/report.json" | head -n 1)

bwrap_note=""
if ((use_bwrap)) && ! command -v bwrap >/dev/null; then
	bwrap_note="bwrap not installed (apt-get install -y bubblewrap)"
elif ((use_bwrap)); then
	printf -v c3 'bwrap --ro-bind / / --dev /dev --bind %q %q --unshare-pid true' "$work/cwd" "$work/cwd"
	if err=$(eval "$c3" 2>&1 </dev/null); then
		names+=(bwrap)
		labels+=("bwrap --ro-bind / / --dev /dev --bind DIR DIR --unshare-pid true")
		cmds+=("$c3")
	else
		bwrap_note="bwrap cannot run here (user namespaces disabled?): ${err:-exit status $?}"
	fi
else
	bwrap_note="left out (--no-bwrap)"
fi
names+=(timeout true)
labels+=("timeout 100 true" "true")
printf -v c4 '%q 100 %q' "$timeout_bin" "$true_bin"
printf -v c5 '%q' "$true_bin"
cmds+=("$c4" "$c5")
n_cmds=${#cmds[@]}
# Medians and minimums with two decimals: the commands take a few ms.
STATS_DECIMALS=2

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "null" }'
}

printf 'isolate: %s (copied to %s)\n' "$src_isolate" "$isolate"
printf 'kernel %s, Landlock ABI %s, %s CPUs, timer: %s, %d runs per command after 1 warm-up round\n' \
	"$(uname -r)" "${abi:-?}" "$(cpus '?')" "$timer" "$runs"
printf 'scratch, cwd and ISOLATE_HOME: %s (%s; set TMPDIR to move it)\n' "$work" "$fstype"
[[ -z $bwrap_note ]] || printf 'bwrap: %s; its row and the isolate/bwrap ratio are skipped\n' "$bwrap_note"
printf '\n'

times=()
for ((i = 0; i < n_cmds; i++)); do
	times[i]=""
done
for ((r = 0; r <= runs; r++)); do
	shuffle "$n_cmds"
	for i in "${ORDER[@]}"; do
		time_once "${cmds[i]}"
		# Round 0 is the warm-up.
		((r == 0)) || times[i]+=" $LAST_MS"
		# Every isolate run leaves its job record behind; keep the state directory as small
		# as it was for the first run.
		if ((i < 4)); then
			rm -rf "${ISOLATE_HOME:?}/jobs/"*
		fi
	done
done

meds=()
mins=()
printf '%-66s  %9s  %9s  %s\n' command "median ms" "min ms" "slow runs (> 2x min)"
for ((i = 0; i < n_cmds; i++)); do
	read -r -a list <<<"${times[i]}"
	read -r med min <<<"$(stats "${list[@]}")"
	meds[i]=$med
	mins[i]=$min
	slow=$(printf '%s\n' "${list[@]}" | awk -v m="$min" '$1 > 2 * m { n++ } END { print n + 0 }')
	printf '%-66s  %9s  %9s  %d of %d\n' "${labels[i]}" "$med" "$min" "$slow" "$runs"
	if [[ -n $out ]]; then
		printf '{"bench":"launch","metric":"%s_ms","command":"%s","median_ms":%s,"min_ms":%s,"slow_runs":%d,"runs":%d,"timer":"%s","fs":"%s","cpus":%s,"landlock_abi":%s,"times_ms":%s}\n' \
			"${names[i]}" "${labels[i]}" "$med" "$min" "$slow" "$runs" "$timer" "$fstype" \
			"$(cpus null)" "${abi:-null}" "$(json_array "${list[@]}")" >>"$out"
	fi
done

idx() {
	local i
	for ((i = 0; i < n_cmds; i++)); do
		if [[ ${names[i]} == "$1" ]]; then
			printf '%d' "$i"
			return 0
		fi
	done
	printf -- '-1'
}

# emit_ratio METRIC A B TARGET: the ratio of the medians (and of the minimums) of rows A and B.
emit_ratio() {
	local a b r rmin met=null verdict="-"
	a=$(idx "$2")
	b=$(idx "$3")
	r=$(ratio "${meds[a]}" "${meds[b]}")
	rmin=$(ratio "${mins[a]}" "${mins[b]}")
	if [[ -n $4 ]]; then
		met=$(awk -v r="$r" -v t="$4" 'BEGIN { print (r <= t) ? "true" : "false" }')
		if [[ $met == true ]]; then verdict=met; else verdict=missed; fi
	fi
	printf '%-32s  %6sx  %6sx  %-8s  %s\n' "$2 / $3" "$r" "$rmin" "${4:+<= $4}" "$verdict"
	if [[ -n $out ]]; then
		printf '{"bench":"launch","metric":"%s","value":%s,"unit":"x","min_ratio":%s,"target":"%s","target_met":%s,"timer":"%s","fs":"%s"}\n' \
			"$1" "$r" "$rmin" "${4:+<= $4}" "$met" "$timer" "$fstype" >>"$out"
	fi
}

printf '\n%-32s  %7s  %7s  %-8s  %s\n' ratio median min target verdict
if [[ $(idx bwrap) -ge 0 ]]; then
	emit_ratio ratio_isolate_bwrap isolate bwrap 1.0
	emit_ratio ratio_no_sandbox_bwrap no-sandbox bwrap ""
fi
emit_ratio ratio_isolate_timeout isolate timeout ""

a=$(idx isolate)
b=$(idx no-sandbox)
share=$(awk -v a="${meds[a]}" -v b="${meds[b]}" 'BEGIN { printf "%.2f", a - b }')
share_min=$(awk -v a="${mins[a]}" -v b="${mins[b]}" 'BEGIN { printf "%.2f", a - b }')
printf '\nsandbox share (isolate - no-sandbox): %s ms median, %s ms min\n' "$share" "$share_min"
if [[ -n $out ]]; then
	printf '{"bench":"launch","metric":"sandbox_share_ms","value":%s,"unit":"ms","min_diff_ms":%s,"timer":"%s","fs":"%s"}\n' \
		"$share" "$share_min" "$timer" "$fstype" >>"$out"
fi
a=$(idx env-seccomp)
b=$(idx env-no-seccomp)
layer=$(awk -v a="${meds[a]}" -v b="${meds[b]}" 'BEGIN { printf "%.2f", a - b }')
layer_min=$(awk -v a="${mins[a]}" -v b="${mins[b]}" 'BEGIN { printf "%.2f", a - b }')
met=$(awk -v r="$layer" 'BEGIN { print (r <= 0.3) ? "met" : "missed" }')
printf 'seccomp layer share (env-seccomp - env-no-seccomp): %s ms median, %s ms min (target <= 0.3 ms: %s)\n' \
	"$layer" "$layer_min" "$met"
if [[ -n $out ]]; then
	printf '{"bench":"launch","metric":"seccomp_share_ms","value":%s,"unit":"ms","min_diff_ms":%s,"target":"<= 0.3","target_met":%s,"timer":"%s","fs":"%s"}\n' \
		"$layer" "$layer_min" "$([[ $met == met ]] && echo true || echo false)" "$timer" "$fstype" >>"$out"
fi
