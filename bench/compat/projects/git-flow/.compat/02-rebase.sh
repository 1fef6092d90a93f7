. .compat/common.sh
base=$(git rev-parse HEAD)
git checkout -q -b topic
echo topic >topic.txt && git add topic.txt && git commit -q -m topic
git checkout -q "$base" && git checkout -q -b mainline
echo main >main.txt && git add main.txt && git commit -q -m main
git checkout -q topic
git rebase -q mainline
git log --oneline -3
