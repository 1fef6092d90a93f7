. .compat/common.sh
# cargo new inside the project, then a dependency and a build.
cargo new -q --vcs none scratch-tool
cd scratch-tool
cargo add -q anyhow@1
cargo run -q
