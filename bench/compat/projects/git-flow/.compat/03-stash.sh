. .compat/common.sh
echo wip >>NOTES
echo new >untracked.txt
git stash push -q -u -m wip
git diff --quiet
git stash pop -q
grep -q wip NOTES && test -f untracked.txt
git stash list
