. .compat/common.sh
"$PY" work.py procpool
