. .compat/common.sh
cargo build -q --bin server
bg server.log target/debug/server
wait_http http://127.0.0.1:7878/ server.log
