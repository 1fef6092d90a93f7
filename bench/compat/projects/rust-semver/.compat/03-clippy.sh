. .compat/common.sh
cargo clippy -q --all-targets
