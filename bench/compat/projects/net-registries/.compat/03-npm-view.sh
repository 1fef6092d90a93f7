. .compat/common.sh
npm view express version
