. .compat/common.sh
"$PY" work.py asyncio_tcp
