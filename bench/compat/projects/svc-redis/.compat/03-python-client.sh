. .compat/common.sh
venv redis
d=$(mktemp -d)
bg "$d/log" redis-server --port 6380 --dir "$d" --save ''
python - <<'PY'
import time, redis
r = redis.Redis(host="localhost", port=6380)
for _ in range(100):
    try:
        r.ping(); break
    except redis.ConnectionError:
        time.sleep(0.1)
r.rpush("q", 1, 2, 3)
assert r.lrange("q", 0, -1) == [b"1", b"2", b"3"]
print("redis-py ok")
PY
