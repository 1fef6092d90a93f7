//! A lock file: an exclusive `flock` on a file that is never removed (removing it would let a
//! second holder lock a new file while the first still holds the old one), held until dropped.
//! prune.lock keeps two prunes from working at once; a job's import.lock serialises its imports.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

use crate::error::{Error, Result};

/// A held lock; released when dropped.
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Takes the lock on `path` (created when missing), waiting while another process holds it.
    pub fn exclusive(path: &Path) -> Result<Lock> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| Error::io("cannot open", path, e))?;
        // SAFETY: flock on a descriptor we own; it blocks until the other holder is done.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(Error::io(
                "cannot lock",
                path,
                std::io::Error::last_os_error(),
            ));
        }
        Ok(Lock { _file: file })
    }
}
