. .compat/common.sh
npm ci --no-audit --no-fund
