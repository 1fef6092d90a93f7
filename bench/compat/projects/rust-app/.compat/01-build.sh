. .compat/common.sh
cargo build
