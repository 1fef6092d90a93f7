. .compat/common.sh
cmake -S . -B build >/dev/null
cmake --build build -j2 >/dev/null
ctest --test-dir build --output-on-failure
