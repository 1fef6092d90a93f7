. .compat/common.sh
npm ci --no-audit --no-fund --silent
bg server.log npm start
wait_http http://localhost:3077/health server.log
