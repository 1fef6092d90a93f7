. .compat/common.sh
npm ci --no-audit --no-fund --loglevel=error
npm install --no-audit --no-fund dayjs@1
node -e 'console.log(require("dayjs")("2024-01-02").format("YYYY"))'
