# shellcheck shell=bash
# serve: this directory over HTTP on loopback port 8765 (python's http.server).
CHROMIUM=$(command -v chromium || command -v chromium-browser)
serve() {
	bg http.log "$PY" -m http.server 8765 --bind 127.0.0.1
	wait_http http://127.0.0.1:8765/page.html http.log >/dev/null
}
