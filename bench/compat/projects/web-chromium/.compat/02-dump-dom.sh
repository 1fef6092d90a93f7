. .compat/common.sh
. .compat/chromium.sh
serve
"$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$(mktemp -d)" \
	--dump-dom http://localhost:8765/page.html | grep -q '(scripted)'
echo dom ok
