. .compat/common.sh
# uv run with inline script metadata: uv makes a cached environment of its own.
venv uv
script=$(mktemp "$TMPDIR/hello.XXXXXX.py")
cat >"$script" <<'PY'
# /// script
# dependencies = ["more-itertools"]
# ///
import more_itertools
print(list(more_itertools.chunked(range(5), 2)))
PY
uv run -q "$script"
