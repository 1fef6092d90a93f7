//! What a rotation keeps for `logs -f`. The writer links the file it rotates away as
//! `output.log.g<N>` (the N-th rotation) before renaming it to `output.log.1`. A follower holds a
//! shared `flock` on `output.log.follow` for as long as it follows; at each rotation the writer asks
//! (a non-blocking exclusive lock) whether anyone does: if so, the older generations stay (at most
//! `KEPT_BYTES`, at least 4 files), else only the newest, which is `output.log.1` itself and takes
//! no room. A follower that finished the file rotated at N goes on with `g<N+1>` when there is
//! one, else with `output.log`: a rotation never takes bytes from it, however many happen while it
//! reads (one that began just before it registered is the newest, so kept too).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The lock a follower holds shared.
pub const FOLLOW_LOCK: &str = "output.log.follow";

/// How much rotated output is kept for a follower that falls behind.
const KEPT_BYTES: u64 = 256 << 20;

/// `path` with `suffix` appended to its name.
fn with(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The name of the file rotated away at rotation `n`.
pub fn generation(path: &Path, n: u64) -> PathBuf {
    with(path, &format!(".g{n}"))
}

/// Rotates `path` (the log, of `max` bytes) for the `n`-th time: kept for followers when there
/// are any, then renamed to `.1`.
pub(super) fn rotate(path: &Path, n: u64, max: u64) -> io::Result<()> {
    let kept = (KEPT_BYTES / max.max(1)).clamp(4, 1024);
    let _ = fs::hard_link(path, generation(path, n));
    let older = match followed(path) {
        true => n.saturating_sub(kept)..n.saturating_sub(kept - 1),
        false => n.saturating_sub(kept)..n,
    };
    for old in older.filter(|&old| old > 0) {
        let _ = fs::remove_file(generation(path, old));
    }
    fs::rename(path, with(path, ".1"))
}

/// Whether a follower holds the follow lock now.
fn followed(path: &Path) -> bool {
    let lock = path.with_file_name(FOLLOW_LOCK);
    let Ok(file) = OpenOptions::new().read(true).open(lock) else {
        return false;
    };
    // SAFETY: flock on a descriptor this function owns; non-blocking.
    let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
    !taken
}

/// A follower's registration: the follow lock, held shared until dropped.
pub struct Following {
    _lock: File,
}

impl Following {
    /// Registers a follower of the log in `dir` (waits only while a rotation probes the lock).
    pub fn start(dir: &Path) -> io::Result<Following> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(FOLLOW_LOCK))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Following { _lock: file })
    }
}

/// The file that comes after the one of inode `done` (finished and rotated away): the one rotated
/// away next, when it was kept; `None` when the next is the log itself.
pub fn successor(path: &Path, done: u64) -> Option<File> {
    let dir = path.parent()?;
    let prefix = format!("{}.g", path.file_name()?.to_str()?);
    let n = fs::read_dir(dir).ok()?.flatten().find_map(|entry| {
        let name = entry.file_name();
        let n: u64 = name.to_str()?.strip_prefix(&prefix)?.parse().ok()?;
        (entry.metadata().ok()?.ino() == done).then_some(n)
    })?;
    File::open(generation(path, n + 1)).ok()
}
