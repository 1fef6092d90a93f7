//! The log's cap as `ISOLATE_LOG_MAX` spells it.

use crate::words::parse_size;

#[test]
fn sizes_parse_with_suffixes() {
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("1M"), Some(1 << 20));
    assert_eq!(parse_size("2g"), Some(2 << 30));
    assert_eq!(parse_size("x"), None);
    assert_eq!(parse_size(""), None);
}
