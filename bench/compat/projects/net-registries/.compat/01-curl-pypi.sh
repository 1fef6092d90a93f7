. .compat/common.sh
curl -fsS -o /dev/null -w '%{http_code}\n' https://pypi.org/simple/attrs/
