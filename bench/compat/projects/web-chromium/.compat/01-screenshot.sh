. .compat/common.sh
. .compat/chromium.sh
serve
# The profile goes where chromium puts it by default (~/.config/chromium).
"$CHROMIUM" --headless --no-sandbox --disable-gpu --window-size=800,600 \
	--screenshot="$PWD/shot.png" http://127.0.0.1:8765/page.html
test -s shot.png
