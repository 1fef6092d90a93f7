. .compat/common.sh
venv -e . pytest pretend
