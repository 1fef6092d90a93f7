#!/usr/bin/env bash
# The tests, as README says to run them: the real agent CLIs that tests/suite/agents.rs drives are
# installed first (once, under target/agents; nothing outside the repository), then cargo test.
# Extra arguments go to cargo test.
set -euo pipefail
cd "$(dirname "$0")/.."

# The real agent CLIs the agent tests drive (tests/suite/agents.rs), from their registries, at the
# versions measured: Claude Code and Codex from npm, aider from PyPI in a virtual environment. A
# registry that cannot be reached stops the tests here, saying so; the tests fail rather than skip.
agents="$PWD/target/agents"
if ! [ -x "$agents/npm/bin/claude" ] || ! [ -x "$agents/npm/bin/codex" ]; then
  npm install --global --prefix "$agents/npm" --no-fund --no-audit --loglevel=error \
    @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 \
    || { echo "scripts/test.sh: cannot install the agent CLIs from the npm registry" >&2; exit 1; }
fi
if ! [ -x "$agents/aider/bin/aider" ]; then
  python3 -m venv "$agents/aider"
  "$agents/aider/bin/pip" install --quiet --disable-pip-version-check aider-chat==0.86.2 \
    || { echo "scripts/test.sh: cannot install aider-chat from PyPI" >&2; exit 1; }
fi
# aider alone on PATH: its virtual environment's python3 must not stand in for the system's.
mkdir -p "$agents/bin"
ln -sfn ../aider/bin/aider "$agents/bin/aider"
export PATH="$agents/npm/bin:$agents/bin:$PATH"
echo "agents: claude $(claude --version), codex $(codex --version), aider $(aider --version)"

cargo test --locked "$@"

# The sandbox again as on a kernel of Landlock ABI 4 (Linux 6.7: no ioctl rules, no scopes): the
# seccomp layer holds what Landlock lacks there. Only for a whole run (no arguments).
if [ $# -eq 0 ]; then
  ISOLATE_LANDLOCK_ABI_MAX=4 cargo test --locked --test all -- \
    suite::escapes suite::sockets suite::policy suite::proxy suite::ordinary
fi
