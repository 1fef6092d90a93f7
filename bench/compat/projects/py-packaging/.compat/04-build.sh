. .compat/common.sh
venv build
python -m build | tail -n 1
ls dist
