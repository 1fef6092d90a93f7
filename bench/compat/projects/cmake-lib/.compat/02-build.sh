. .compat/common.sh
cmake -S . -B build >/dev/null
cmake --build build -j2
