. .compat/common.sh
venv -e .
python -m unittest -q 2>&1 | tail -n 3
