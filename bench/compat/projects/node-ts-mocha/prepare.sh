# Runs once, bare: the lockfile, resolved from the npm registry.
set -euo pipefail
npm install --package-lock-only --no-audit --no-fund --silent
