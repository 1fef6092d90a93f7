. .compat/common.sh
venv -e .
python -c 'import more_itertools; print(more_itertools.__version__)'
