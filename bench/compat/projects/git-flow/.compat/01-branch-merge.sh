. .compat/common.sh
git checkout -q -b feature
echo feature >>NOTES
git commit -q -am 'notes: feature'
git checkout -q -
git merge -q --no-ff -m 'merge feature' feature
git log --oneline -3
