. .compat/common.sh
cmake -S . -B build
