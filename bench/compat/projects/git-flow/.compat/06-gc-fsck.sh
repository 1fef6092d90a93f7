. .compat/common.sh
git gc -q
git fsck --no-progress
git count-objects -v | head -n 2
