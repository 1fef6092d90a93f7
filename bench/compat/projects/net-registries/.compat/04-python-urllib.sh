. .compat/common.sh
"$PY" - <<'PY'
import json, urllib.request
with urllib.request.urlopen("https://registry.npmjs.org/left-pad/latest", timeout=30) as r:
    print(json.load(r)["version"])
PY
