. .compat/common.sh
venv -r requirements.txt
pytest -q | tail -n 2
