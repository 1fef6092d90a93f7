. .compat/common.sh
cargo fmt --check
