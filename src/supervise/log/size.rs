//! The log's cap from `ISOLATE_LOG_MAX`: bytes, or with a K, M or G suffix, at least 4096.

use crate::error::Result;

pub const MAX_VAR: &str = "ISOLATE_LOG_MAX";
const DEFAULT_MAX: u64 = 64 << 20;

/// The cap from `ISOLATE_LOG_MAX`.
pub fn max_from_env() -> Result<u64> {
    crate::words::size_from_env(MAX_VAR, DEFAULT_MAX, 4096)
}
