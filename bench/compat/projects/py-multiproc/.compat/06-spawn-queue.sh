. .compat/common.sh
"$PY" work.py spawn_queue
