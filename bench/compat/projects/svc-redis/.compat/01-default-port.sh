. .compat/common.sh
d=$(mktemp -d)
bg "$d/log" redis-server --port 6379 --dir "$d" --save ''
for _ in $(seq 1 100); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli set greeting hello >/dev/null
test "$(redis-cli get greeting)" = hello || { cat "$d/log" >&2; exit 1; }
echo redis ok
