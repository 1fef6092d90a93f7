. .compat/common.sh
# uv from PyPI, then uv's own resolver, cache and virtual environment.
venv uv
uv venv -q .uvenv
VIRTUAL_ENV=$PWD/.uvenv uv pip install -q -r requirements.txt
.uvenv/bin/python -m pytest -q | tail -n 1
