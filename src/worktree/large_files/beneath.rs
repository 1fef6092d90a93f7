//! Reading what a job wrote beneath its worktree without following a link, blocking on a FIFO or
//! listing without end: every directory opened by descriptor, one component at a time with
//! `O_NOFOLLOW`; every file opened `O_NONBLOCK` and taken only when it is a regular file; every
//! listing charged to a budget. Never writes.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{open, openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, Mode, SFlag};

/// The most entries listed in one look at a job's stores: more keeps the worktree.
pub(super) const MAX_ENTRIES: usize = 1_000_000;

/// The directory `parts` beneath `root`, each component opened without following a link; `None`
/// when one is missing, or a link or a file stands where a directory should.
pub(super) fn open_dir(root: &Path, parts: &[&str]) -> io::Result<Option<OwnedFd>> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut dir = open(root, flags, Mode::empty())?;
    for part in parts {
        dir = match child_dir(&dir, OsStr::new(part)) {
            Ok(next) => next,
            Err(Errno::ENOENT | Errno::ENOTDIR) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
    }
    Ok(Some(dir))
}

/// The directory `name` of `dir`, never through a link (`ELOOP`).
pub(super) fn child_dir(dir: &impl AsFd, name: &OsStr) -> nix::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(dir, name, flags, Mode::empty())
}

/// The names in `dir` (not `.` nor `..`), each charged to `budget`; an error once it is spent.
pub(super) fn names(dir: &OwnedFd, budget: &mut usize) -> io::Result<Vec<OsString>> {
    let listed = nix::dir::Dir::from_fd(dir.try_clone()?)?;
    let mut out = Vec::new();
    for entry in listed.into_iter() {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        *budget = budget.checked_sub(1).ok_or_else(|| {
            io::Error::other(format!("more than {MAX_ENTRIES} entries to look at"))
        })?;
        out.push(name.to_os_string());
    }
    Ok(out)
}

/// The size of `name` in `dir` when it is a regular file (never following a link).
pub(super) fn regular_size(dir: &impl AsFd, name: &OsStr) -> Option<u64> {
    let meta = fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
    let regular = SFlag::from_bits_truncate(meta.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG;
    regular.then_some(meta.st_size as u64)
}

/// Whether `name` is in `dir` (never following a link).
pub(super) fn exists(dir: &impl AsFd, name: &OsStr) -> bool {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok()
}

/// The file `name` of `dir` opened to read, when it is a regular file: never through a link, never
/// waiting on a FIFO's writer (`O_NONBLOCK`, then the kind checked on the descriptor).
pub(super) fn open_regular(dir: &impl AsFd, name: &OsStr) -> io::Result<(File, u64)> {
    let flags = OFlag::O_RDONLY
        | OFlag::O_NOFOLLOW
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY
        | OFlag::O_CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty())?;
    let meta = fstat(&fd)?;
    if SFlag::from_bits_truncate(meta.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
        return Err(io::Error::other("not a regular file"));
    }
    Ok((File::from(fd), meta.st_size as u64))
}
