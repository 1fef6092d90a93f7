//! One entry of a tree being removed, named in the descriptor of its directory, and its removal
//! (a whole subtree for a directory). Never resolves a path again once it is listed.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fchmod, fstat, fstatat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};

use crate::sys::mode;

/// One entry to remove: its name in the directory `parent`.
pub(super) struct Entry {
    pub(super) parent: Arc<OwnedFd>,
    pub(super) name: OsString,
    pub(super) is_dir: bool,
}

pub(super) fn changed(what: &Path, why: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!(
        "{} changed while it was being removed ({why}); what is left was kept",
        what.display()
    ))
}

pub(super) fn open_dir(parent: &impl AsFd, name: &OsStr) -> nix::Result<OwnedFd> {
    openat(
        parent,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// A directory of the tree opened to be emptied. One its owner may not list, search or write (a
/// job's `chmod 000` or `chmod 500`) is given those rights first, on the directory itself, never
/// through a link (sys/mode.rs). Only the rights of the owner are added, and only to what goes.
pub(super) fn open_to_empty(parent: &impl AsFd, name: &OsStr) -> nix::Result<OwnedFd> {
    let dir = match open_dir(parent, name) {
        Err(Errno::EACCES) => {
            let path = mode::open_path(parent, name)?;
            mode::set_mode(&path, mode::mode_of(&path)? | Mode::S_IRWXU)?;
            open_dir(parent, name)?
        }
        other => other?,
    };
    let mode = Mode::from_bits_truncate(fstat(&dir)?.st_mode);
    if !mode.contains(Mode::S_IRWXU) {
        fchmod(&dir, mode | Mode::S_IRWXU)?;
    }
    Ok(dir)
}

/// The entries of the directory `dir` (not `.` and `..`), with whether each is a directory (its own
/// type: a symlink to a directory is not one).
pub(super) fn entries(dir: &Arc<OwnedFd>) -> nix::Result<Vec<Entry>> {
    let listing = Dir::from_fd(nix::unistd::dup(dir.as_fd())?)?;
    let mut out = Vec::new();
    for entry in listing {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            Some(kind) => kind == Type::Directory,
            None => {
                let st = fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)?;
                SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
            }
        };
        out.push(Entry {
            parent: Arc::clone(dir),
            name: name.to_os_string(),
            is_dir,
        });
    }
    Ok(out)
}

/// Removes one entry, a whole subtree for a directory.
pub(super) fn remove(entry: &Entry) -> nix::Result<()> {
    if entry.is_dir {
        // ELOOP or ENOTDIR: no longer a directory since it was listed. Nothing is followed.
        let dir = Arc::new(open_to_empty(entry.parent.as_ref(), &entry.name)?);
        for inner in entries(&dir)? {
            remove(&inner)?;
        }
        unlinkat(
            entry.parent.as_fd(),
            entry.name.as_os_str(),
            UnlinkatFlags::RemoveDir,
        )
    } else {
        unlinkat(
            entry.parent.as_fd(),
            entry.name.as_os_str(),
            UnlinkatFlags::NoRemoveDir,
        )
    }
}
