. .compat/common.sh
git bisect start -- >/dev/null
git bisect bad HEAD
git bisect good good
git bisect run "${COMPAT_PYTHON:-python3}" check.py | grep 'is the first bad commit'
git bisect reset >/dev/null
