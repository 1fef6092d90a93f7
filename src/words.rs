//! How isolate writes counts, times and names for people: `1 commit`, `2 commits`; RFC 3339
//! timestamps to the second (the form of every time in a record); the slug a job's id and a
//! project's key are made of, from whatever bytes a user named them with; sizes as people write
//! them (`64M`); durations as people write them (`90s`, `2h`); a message cut short.

use std::time::{Duration, SystemTime};

/// `n` and the word for `n` of it: `plural(1, "commit", "commits")` is `1 commit`.
/// A size in bytes as a person reads it: `512 MiB`, `1.5 GiB`, `800 bytes`.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = "bytes";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    match value.fract() == 0.0 || unit == "bytes" {
        true => format!("{} {unit}", value as u64),
        false => format!("{value:.1} {unit}"),
    }
}

pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `text` cut to at most `most` characters, `…` saying where: for a message that quotes what a
/// job wrote (gix quotes a whole unreadable file).
pub fn clipped(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// `t` as a record writes it: `2026-12-01T14:25:17Z`.
pub fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// `t` to the nanosecond, as a record writes when jobs are queued: `2026-12-01T14:25:17.123456789Z`
/// (jobs queued within one second keep their order).
pub fn precise_timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_nanos(t).to_string()
}

const MAX_SLUG: usize = 32;

/// Lowercase ASCII words of `name` joined by `-`, at most 32 characters, `task` when empty.
pub fn slug(name: &[u8]) -> String {
    let mut out = String::new();
    for word in name
        .split(|b| !b.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let sep = usize::from(!out.is_empty());
        if out.len() + sep + word.len() > MAX_SLUG {
            if out.is_empty() {
                // One word longer than the limit: cut it rather than lose the name entirely.
                out.extend(
                    word[..MAX_SLUG]
                        .iter()
                        .map(|b| b.to_ascii_lowercase() as char),
                );
            }
            break;
        }
        if sep == 1 {
            out.push('-');
        }
        out.extend(word.iter().map(|b| b.to_ascii_lowercase() as char));
    }
    if out.is_empty() {
        out.push_str("task");
    }
    out
}

/// A size as people write it: bytes, or with a K, M or G suffix (`64M`).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 10),
        'm' | 'M' => (&text[..text.len() - 1], 20),
        'g' | 'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// The size the variable `var` sets (at least `min`), else `default`; a value that is not a size
/// is a usage error naming the variable.
pub fn size_from_env(var: &str, default: u64, min: u64) -> crate::error::Result<u64> {
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(text) => parse_size(&text).filter(|&n| n >= min).ok_or_else(|| {
            crate::error::Error::Usage(format!(
                "{var}={text:?}: expected a size of at least {min} bytes, like 1M or 64M"
            ))
        }),
    }
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
    fn a_clipped_message_keeps_whole_characters_and_says_where_it_was_cut() {
        assert_eq!(clipped("short", 10), "short");
        assert_eq!(clipped("exactly10!", 10), "exactly10!");
        assert_eq!(clipped("ééééé", 3), "ééé…");
        assert_eq!(clipped(&"\\0".repeat(1_000_000), 4), "\\0\\0…");
    }

    #[test]
    fn a_timestamp_is_rfc3339_to_the_second() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_500);
        assert_eq!(timestamp(t), "1970-01-01T00:00:01Z");
    }
}

/// The longest duration a timeout or grace period may be, 100 years of humantime's (365.25 days):
/// the supervisor adds it to the clock, which has no instant a billion years ahead.
const DURATION_MAX: Duration = Duration::from_secs(100 * 31_557_600);

/// A duration as people write it (`90s`, `15m`, `2h`, `1h 30m`), at most 100 years. A bare
/// number is seconds, as `timeout(1)` and `sleep(1)` read it (`300`, `2.5`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bare = text.trim();
    if !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return match bare.parse::<f64>() {
            Ok(secs) if secs <= DURATION_MAX.as_secs_f64() => Ok(Duration::from_secs_f64(secs)),
            Ok(_) => Err(format!("{text:?} is longer than 100 years")),
            Err(_) => Err(format!("{text:?} is not a number of seconds")),
        };
    }
    match humantime::parse_duration(text) {
        Ok(d) if d <= DURATION_MAX => Ok(d),
        Ok(_) => Err(format!("{text:?} is longer than 100 years")),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod duration_tests {
    use super::*;

    #[test]
    fn a_duration_past_the_clocks_reach_is_refused() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("100 years").is_ok());
        // A bare number is seconds, as timeout(1) reads it.
        assert_eq!(parse_duration("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2.5"), Ok(Duration::from_millis(2500)));
        assert!(parse_duration("1.2.3").is_err());
        assert!(parse_duration("99999999999999").is_err());
        for text in [
            "18446744073709551615s",
            "300000000000years",
            "101y",
            "-1s",
            "",
        ] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
    }
}
