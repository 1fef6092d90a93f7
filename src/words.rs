//! How isolate writes counts and times for people: `1 commit`, `2 commits`; RFC 3339 timestamps to
//! the second (the form of every time in a record).

use std::time::SystemTime;

/// `n` and the word for `n` of it: `plural(1, "commit", "commits")` is `1 commit`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `t` as a record writes it: `2026-12-01T14:25:17Z`.
pub fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(0, "commit", "commits"), "0 commits");
        assert_eq!(plural(1, "entry", "entries"), "1 entry");
        assert_eq!(plural(2, "file", "files"), "2 files");
    }

    #[test]
    fn a_timestamp_is_rfc3339_to_the_second() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_500);
        assert_eq!(timestamp(t), "1970-01-01T00:00:01Z");
    }
}
