. .compat/common.sh
cargo build -q --release
