. .compat/common.sh
venv -r requirements.txt
jupyter kernelspec list
