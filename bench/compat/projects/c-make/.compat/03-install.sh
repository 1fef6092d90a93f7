. .compat/common.sh
make install DESTDIR="$PWD/stage" && find stage -type f
