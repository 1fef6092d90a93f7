. .compat/common.sh
cargo test -q
