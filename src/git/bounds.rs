//! The bounds of what isolate brings into the project from a source it does not trust: a job's
//! commits (the import) and a remote's objects (the fetch of `--pr` and `--base fresh`). Neither
//! may take the machine: the memory of each git it runs (its address space), the size of the pack
//! it brings (and the LFS objects an import copies), and a time limit (`TIMEOUT`). Over a
//! bound, nothing enters the project; the error names the bound.
//!
//! `ISOLATE_IMPORT_MEMORY` (default 2G) and `ISOLATE_IMPORT_MAX_SIZE` (default 4G) change them.

use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::error::{ImportBound, Result};
use crate::words::size_from_env;

pub const MEMORY_VAR: &str = "ISOLATE_IMPORT_MEMORY";
pub const SIZE_VAR: &str = "ISOLATE_IMPORT_MAX_SIZE";
const DEFAULT_MEMORY: u64 = 2 << 30;
const DEFAULT_SIZE: u64 = 4 << 30;

/// The bounds of one import or fetch.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// The address space of each git, in bytes.
    pub memory: u64,
    /// The pack it brings, in bytes.
    pub size: u64,
}

pub fn bounds() -> Result<Bounds> {
    Ok(Bounds {
        memory: size_from_env(MEMORY_VAR, DEFAULT_MEMORY, 16 << 20)?,
        size: size_from_env(SIZE_VAR, DEFAULT_SIZE, 1 << 20)?,
    })
}

/// The `-c` options that keep git's own caches and maps inside `memory`: pack windows mapped a few
/// at a time, one thread, bounded delta caches. Without them git maps up to 32 GiB of packs.
pub fn memory_config(memory: u64) -> Vec<String> {
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

/// What git's stderr says when a bound stopped it, if one did (`file too large`: a write past the
/// size `hold` set).
pub fn exceeded(stderr: &str) -> Option<ImportBound> {
    let text = stderr.to_ascii_lowercase();
    let memory = ["out of memory", "cannot allocate memory", "mmap failed"];
    if memory.iter().any(|said| text.contains(said)) {
        Some(ImportBound::Memory)
    } else if text.contains("exceeds maximum allowed size") || text.contains("file too large") {
        Some(ImportBound::Size)
    } else {
        None
    }
}

impl Bounds {
    /// The limit of `bound`, and the variable that sets it.
    pub fn of(self, bound: ImportBound) -> (u64, &'static str) {
        match bound {
            ImportBound::Memory => (self.memory, MEMORY_VAR),
            ImportBound::Size => (self.size, SIZE_VAR),
        }
    }
}

/// Holds `cmd`, and every process it starts, to `bounds`: its address space to `bounds.memory`,
/// and with `files`, every file it writes to `bounds.size` bytes (`RLIMIT_FSIZE`, its `SIGXFSZ`
/// ignored so that the write fails with `EFBIG` and git says `File too large`).
pub fn hold(cmd: &mut Command, bounds: Bounds, files: bool) {
    let memory = bounds.memory;
    let size = bounds.size;
    // SAFETY: between fork and exec only setrlimit and signal run, both async-signal-safe, touching
    // nothing of the parent's.
    unsafe {
        cmd.pre_exec(move || {
            let set = |resource, value: u64| {
                let limit = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                match libc::setrlimit(resource, &limit) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            };
            set(libc::RLIMIT_AS, memory)?;
            if files {
                set(libc::RLIMIT_FSIZE, size)?;
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            }
            Ok(())
        });
    }
}
