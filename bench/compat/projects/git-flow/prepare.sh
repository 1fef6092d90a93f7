# Runs once, bare, after git init: a short history to rebase and bisect over.
set -euo pipefail
printf 'def add(a, b):\n    return a + b\n' >calc.py
printf 'import calc\nassert calc.add(2, 2) == 4\n' >check.py
git add calc.py check.py
git commit -q -m 'calc: add'
for i in 1 2 3 4 5 6; do
	echo "note $i" >>NOTES
	if [[ $i == 4 ]]; then sed -i 's/a + b/a + b + (a == 2)/' calc.py; fi
	git add NOTES calc.py
	git commit -q -m "notes: $i"
done
git tag good HEAD~6
