. .compat/common.sh
d=$(mktemp -d)
bg "$d/log" redis-server --port 0 --unixsocket "$d/redis.sock" --dir "$d" --save ''
for _ in $(seq 1 100); do redis-cli -s "$d/redis.sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
test "$(redis-cli -s "$d/redis.sock" incr n)" = 1 || { cat "$d/log" >&2; exit 1; }
echo redis ok
