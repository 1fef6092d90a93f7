. .compat/common.sh
npm ci --no-audit --no-fund --loglevel=error
npm run build
npm test
