# Runs once, bare: the sdist of packaging from PyPI, which ships its tests.
set -euo pipefail
d=$(mktemp -d)
"${COMPAT_PYTHON:-python3}" -m pip download -q --no-deps --no-binary :all: -d "$d" packaging==24.2
tar -xzf "$d"/*.tar.gz --strip-components=1
rm -rf "$d"
printf '.venv/\ndist/\nbuild/\n__pycache__/\n*.egg-info/\n.pytest_cache/\n' >.gitignore
