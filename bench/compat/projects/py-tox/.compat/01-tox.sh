. .compat/common.sh
venv tox
tox -q
