. .compat/common.sh
npm ci --no-audit --no-fund --loglevel=error
bg server.log npm start
wait_http http://localhost:3077/health server.log
