. .compat/common.sh
d=$(mktemp -d)
git clone -q . "$d/clone"
git -C "$d/clone" log --oneline -1
