. .compat/common.sh
d=$(mktemp -d)
"$PY" -m pip download -q --no-deps -d "$d" attrs
ls "$d"
