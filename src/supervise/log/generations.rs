//! What a rotation keeps for `logs -f`. The writer links the file it rotates away as
//! `output.log.g<N>` (the N-th rotation) before renaming it to `output.log.1`. A follower holds a
//! shared `flock` on `output.log.follow` for as long as it follows; at each rotation the writer asks
//! (a non-blocking exclusive lock) whether anyone does: if so, the older generations stay (at most
//! `KEPT_BYTES`, at least 4 files, however small the cap), else only the newest, which is
//! `output.log.1` itself and takes no room. A follower that finished the file rotated at N goes on
//! with `g<N+1>` when there is one, else with `output.log` (looked for again after it is opened: a
//! rotation between the two is seen): a rotation never takes bytes from it, however many happen
//! while it reads (one that began just before it registered is the newest, so kept too). One that
//! falls more than `KEPT_BYTES` behind is told that output was skipped.

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
/// are any, then renamed to `.1`. `oldest` is the oldest generation still kept (1 at first); each
/// one is removed once, so a rotation costs a few calls however many generations are kept.
pub(super) fn rotate(path: &Path, n: u64, max: u64, oldest: &mut u64) -> io::Result<()> {
    let kept = (KEPT_BYTES / max.max(1)).max(4);
    let _ = fs::hard_link(path, generation(path, n));
    // Followed: the last `kept` stay (this one among them); else only this one, the newest.
    let keep_from = match followed(path) {
        true => n.saturating_sub(kept - 1),
        false => n,
    };
    while *oldest < keep_from {
        let _ = fs::remove_file(generation(path, *oldest));
        *oldest += 1;
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

/// What comes after a file finished and rotated away.
pub enum Next {
    /// The file rotated away after it, kept for a follower, and its generation.
    Kept(File, u64),
    /// The log itself (none yet when it is being made again), which will be generation `n` when
    /// rotated, when `n` is known.
    Log(Option<File>, Option<u64>),
    /// The file finished was not kept (the follower fell more than the kept generations behind):
    /// output between it and the log is gone; the log itself follows.
    Lost(Option<File>),
}

/// The file that comes after the one of inode `done` (finished and rotated away), which was
/// generation `known` when that is known (then one stat, not a scan of the directory).
pub fn successor(path: &Path, done: u64, known: Option<u64>) -> Next {
    let is_done = |n: u64| fs::metadata(generation(path, n)).is_ok_and(|m| m.ino() == done);
    let n = match known.filter(|&n| is_done(n)) {
        Some(n) => Some(n),
        None => scan(path, done),
    };
    let Some(n) = n else {
        return Next::Lost(crate::textfile::open_untrusted(path).ok());
    };
    if let Ok(next) = crate::textfile::open_untrusted(generation(path, n + 1)) {
        return Next::Kept(next, n + 1);
    }
    let log = crate::textfile::open_untrusted(path).ok();
    // Rotated again between the two opens: the log opened may be the one after that rotation,
    // and the one rotated away is kept (linked before the rename).
    match crate::textfile::open_untrusted(generation(path, n + 1)) {
        Ok(next) => Next::Kept(next, n + 1),
        Err(_) => Next::Log(log, Some(n + 1)),
    }
}

/// The generation of the file of inode `done`, found among those kept.
fn scan(path: &Path, done: u64) -> Option<u64> {
    let dir = path.parent()?;
    let prefix = format!("{}.g", path.file_name()?.to_str()?);
    fs::read_dir(dir).ok()?.flatten().find_map(|entry| {
        let name = entry.file_name();
        let n: u64 = name.to_str()?.strip_prefix(&prefix)?.parse().ok()?;
        (entry.metadata().ok()?.ino() == done).then_some(n)
    })
}
