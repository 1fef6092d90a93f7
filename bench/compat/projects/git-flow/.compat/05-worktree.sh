. .compat/common.sh
git worktree add -q -b hotfix .wt/hotfix
(cd .wt/hotfix && echo fix >>NOTES && git commit -q -am hotfix)
git worktree remove .wt/hotfix
git log --oneline -1 hotfix
