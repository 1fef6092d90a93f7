. .compat/common.sh
venv -r requirements.txt
