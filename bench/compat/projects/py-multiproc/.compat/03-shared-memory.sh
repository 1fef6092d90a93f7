. .compat/common.sh
"$PY" work.py shm
