. .compat/common.sh
d=$(mktemp -d)
git format-patch -q -1 -o "$d" HEAD
git checkout -q -b replay HEAD~1
git am -q "$d"/*.patch
git log --oneline -1
