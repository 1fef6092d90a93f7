. .compat/common.sh
"$PY" -m compileall -q more_itertools tests
"$PY" -m doctest -v more_itertools/recipes.py | tail -n 1
