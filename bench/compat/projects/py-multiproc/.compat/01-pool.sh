. .compat/common.sh
"$PY" work.py pool
