. .compat/common.sh
venv -e . pytest pretend
pytest -q -x tests | tail -n 2
