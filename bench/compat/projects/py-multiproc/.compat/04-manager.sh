. .compat/common.sh
"$PY" work.py manager
