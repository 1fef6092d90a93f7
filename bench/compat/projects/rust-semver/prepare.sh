# Runs once, bare: the source of the semver crate as crates.io serves it (tests included), with a
# lockfile.
set -euo pipefail
d=$(mktemp -d)
cargo init -q --vcs none --name fetcher "$d"
(cd "$d" && cargo add -q semver@=1.0.23 && cargo fetch -q)
src=$(find "${CARGO_HOME:-$HOME/.cargo}/registry/src" -maxdepth 2 -name semver-1.0.23 | head -n 1)
cp -r "$src"/. .
rm -rf "$d" .cargo_vcs_info.json
cargo generate-lockfile -q
printf 'target/\n' >.gitignore
