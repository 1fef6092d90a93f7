. .compat/common.sh
. .compat/chromium.sh
serve
"$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$(mktemp -d)" \
	--print-to-pdf="$PWD/page.pdf" http://127.0.0.1:8765/page.html
test -s page.pdf
