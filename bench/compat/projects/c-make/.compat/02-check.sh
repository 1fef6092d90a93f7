. .compat/common.sh
make -j2 check
