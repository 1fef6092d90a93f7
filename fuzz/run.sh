#!/bin/sh
# Runs every fuzz target for a bounded time: fuzz/run.sh [SECONDS per target, default 60] [TARGET...]
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo fuzz uses nightly-only flags; on a stable
# toolchain RUSTC_BOOTSTRAP=1 lets it build (set here unless already set). New inputs found are
# kept in a scratch corpus under fuzz/target, not in the committed seeds (fuzz/corpus/<target>).
# Exits non-zero when a target finds a crash, a leak, an out-of-memory or a timeout; the input
# that did it is in fuzz/artifacts/<target>/.
set -eu
cd "$(dirname "$0")"
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-"job_id policy record"}
export RUSTC_BOOTSTRAP="${RUSTC_BOOTSTRAP:-1}"
status=0
for target in $targets; do
    work="target/corpus/$target"
    mkdir -p "$work" "artifacts/$target"
    echo "== $target: ${seconds}s"
    if ! cargo fuzz run "$target" "$work" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1; then
        echo "== $target: FAILED (see fuzz/artifacts/$target/)"
        status=1
    fi
done
exit $status
