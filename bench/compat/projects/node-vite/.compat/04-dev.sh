. .compat/common.sh
npm ci --no-audit --no-fund --loglevel=error
bg dev.log npm run dev
wait_http http://localhost:5173/src/main.js dev.log >/dev/null
echo dev ok
