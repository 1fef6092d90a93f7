. .compat/common.sh
# A new dependency from crates.io, as an agent adds one.
cargo add -q itoa@1
cat >>src/lib.rs <<'RS'

/// Format a number with itoa.
pub fn fmt_num(n: u64) -> String {
    itoa::Buffer::new().format(n).to_string()
}
RS
cargo build -q
