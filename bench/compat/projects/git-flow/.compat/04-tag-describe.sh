. .compat/common.sh
git tag -a v1.0 -m 'release 1.0'
git describe --tags
