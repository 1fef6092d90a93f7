. .compat/common.sh
"$PY" work.py forkserver
