#!/usr/bin/env bash
# Installs isolate from this checkout and runs a sandboxed agent job on a sample repository.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cargo install --quiet --locked --path "$here"
PATH="$HOME/.cargo/bin:$PATH"

demo=$(mktemp -d "${TMPDIR:-/tmp}/isolate-demo.XXXXXX")
cd "$demo"
git init -q -b main
git config user.name "Demo User"
git config user.email "demo@example.com"
printf 'hello\n' > README
git add README
git commit -q -m "first commit"

echo "== a job that commits in its own worktree, and tries to write the project directly"
isolate run --worktree --name "demo agent" -- sh -c '
  echo "agent was here" > agent.txt && git add agent.txt && git commit -q -m "agent work"
  echo "escape" > "$ISOLATE_REPO/README" || echo "(the sandbox refused the write to the project)"
'
echo
echo "== the project afterwards ($demo)"
git branch --list 'isolate/*'
git log --oneline --all
echo "README still says: $(cat README)"
