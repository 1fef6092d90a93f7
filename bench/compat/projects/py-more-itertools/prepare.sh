# Runs once, bare, in the new project before its first commit: the sdist from PyPI, tests included.
set -euo pipefail
d=$(mktemp -d)
"${COMPAT_PYTHON:-python3}" -m pip download -q --no-deps --no-binary :all: -d "$d" more-itertools==10.5.0
tar -xzf "$d"/*.tar.gz --strip-components=1
rm -rf "$d"
printf '.venv/\ndist/\nbuild/\n__pycache__/\n*.egg-info/\n' >.gitignore
