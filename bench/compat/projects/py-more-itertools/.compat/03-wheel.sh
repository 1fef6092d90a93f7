. .compat/common.sh
# The build backend (flit_core) is fetched into an isolated build environment.
"$PY" -m pip wheel -q --no-deps -w dist .
ls dist/*.whl
