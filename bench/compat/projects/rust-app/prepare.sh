# Runs once, bare: the lockfile, resolved from crates.io.
set -euo pipefail
cargo generate-lockfile -q
