. .compat/common.sh
make asan
