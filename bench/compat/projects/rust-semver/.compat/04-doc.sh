. .compat/common.sh
cargo doc -q --no-deps
