//! The bounds of an import, which reads what a job wrote and so must not let a job's repository
//! take the machine: the memory of each git it runs (its address space, and its cgroup's
//! `memory.max` where isolate may set it), the total size of the pack it copies, and a time limit
//! (`git::TIMEOUT`). A job over a bound keeps its worktree; the error names the bound.
//!
//! `ISOLATE_IMPORT_MEMORY` (default 2G) and `ISOLATE_IMPORT_MAX_SIZE` (default 4G) change them.

use crate::error::{ImportBound, Result};
use crate::words::size_from_env;

pub const MEMORY_VAR: &str = "ISOLATE_IMPORT_MEMORY";
pub const SIZE_VAR: &str = "ISOLATE_IMPORT_MAX_SIZE";
const DEFAULT_MEMORY: u64 = 2 << 30;
const DEFAULT_SIZE: u64 = 4 << 30;

/// The bounds of this import.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    /// The address space of each git of the import, in bytes.
    pub(super) memory: u64,
    /// The pack it copies, in bytes.
    pub(super) size: u64,
}

pub(super) fn bounds() -> Result<Bounds> {
    Ok(Bounds {
        memory: size_from_env(MEMORY_VAR, DEFAULT_MEMORY, 16 << 20)?,
        size: size_from_env(SIZE_VAR, DEFAULT_SIZE, 1 << 20)?,
    })
}

/// The `-c` options that keep git's own caches and maps inside `memory`: pack windows mapped a few
/// at a time, one thread, bounded delta caches. Without them git maps up to 32 GiB of packs.
pub(super) fn memory_config(memory: u64) -> Vec<String> {
    // git reads some of these as ints: never more than 1 GiB each.
    let part = |n: u64| format!("{}", (memory / n).clamp(1 << 20, 1 << 30));
    [
        ("core.packedGitLimit", part(4)),
        ("core.packedGitWindowSize", part(32)),
        ("core.deltaBaseCacheLimit", part(16)),
        ("pack.deltaCacheSize", part(16)),
        ("pack.windowMemory", part(8)),
        ("pack.threads", "1".to_string()),
    ]
    .into_iter()
    .flat_map(|(key, value)| ["-c".to_string(), format!("{key}={value}")])
    .collect()
}

/// What git's stderr says when a bound stopped it, if one did.
pub(super) fn exceeded(stderr: &str) -> Option<ImportBound> {
    let text = stderr.to_ascii_lowercase();
    let memory = ["out of memory", "cannot allocate memory", "mmap failed"];
    if memory.iter().any(|said| text.contains(said)) {
        Some(ImportBound::Memory)
    } else if text.contains("exceeds maximum allowed size") {
        Some(ImportBound::Size)
    } else {
        None
    }
}

impl Bounds {
    /// The limit of `bound`, and the variable that sets it.
    pub(super) fn of(self, bound: ImportBound) -> (u64, &'static str) {
        match bound {
            ImportBound::Memory => (self.memory, MEMORY_VAR),
            ImportBound::Size => (self.size, SIZE_VAR),
        }
    }
}
