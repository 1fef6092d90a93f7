. .compat/common.sh
make -j2
