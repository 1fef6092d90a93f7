. .compat/common.sh
npm ci --no-audit --no-fund --loglevel=error
npm run build >/dev/null
bg preview.log npm run preview
wait_http http://localhost:4173/ preview.log >page.html
grep -q '<h1' page.html
echo preview ok
