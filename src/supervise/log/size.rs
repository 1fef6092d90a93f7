//! The log's cap from `ISOLATE_LOG_MAX`: bytes, or with a K, M or G suffix, at least 4096.

use crate::error::{Error, Result};

pub const MAX_VAR: &str = "ISOLATE_LOG_MAX";
const DEFAULT_MAX: u64 = 64 << 20;

/// The cap from `ISOLATE_LOG_MAX`.
pub fn max_from_env() -> Result<u64> {
    match std::env::var(MAX_VAR) {
        Err(_) => Ok(DEFAULT_MAX),
        Ok(text) => parse_size(&text).filter(|&n| n >= 4096).ok_or_else(|| {
            Error::Usage(format!(
                "{MAX_VAR}={text:?}: expected a size of at least 4096 bytes, like 1M or 64M"
            ))
        }),
    }
}

pub(super) fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 10),
        'm' | 'M' => (&text[..text.len() - 1], 20),
        'g' | 'G' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}
