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

/// How deep the removal of one subtree goes, holding a descriptor for each directory on the way.
/// A directory deeper than this is moved up to the top of the tree and removed from there: a job
/// can make a chain of directories deeper than the descriptors a process may hold (its TMPDIR,
/// 25,000 levels made by renames), which no removal holding one per level could go through.
const DEPTH: usize = 32;

/// How many names at the top a move up tries before it gives up (and the tree is kept).
const MOVE_TRIES: u64 = 1 << 16;

/// The top of the tree being removed, and the subtrees moved up to it, to be removed in turn.
pub(super) struct Deep {
    pub(super) top: Arc<OwnedFd>,
    pub(super) moved: std::sync::Mutex<Vec<Entry>>,
    made: std::sync::atomic::AtomicU64,
}

impl Deep {
    pub(super) fn new(top: Arc<OwnedFd>) -> Deep {
        Deep {
            top,
            moved: std::sync::Mutex::new(Vec::new()),
            made: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// `entry`, a directory `DEPTH` levels down, moved to the top under a name of isolate's (never
    /// over anything: a name the tree holds already, a job's decoy, is passed over) and queued.
    pub(super) fn move_up(&self, entry: &Entry) -> nix::Result<()> {
        let name = loop {
            let n = self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let name = OsString::from(format!(".isolate-deep-{n}"));
            match nix::fcntl::renameat2(
                entry.parent.as_fd(),
                entry.name.as_os_str(),
                self.top.as_fd(),
                name.as_os_str(),
                nix::fcntl::RenameFlags::RENAME_NOREPLACE,
            ) {
                Err(Errno::EEXIST) if n < MOVE_TRIES => continue,
                Err(e) => return Err(e),
                Ok(()) => break name,
            }
        };
        let moved = Entry {
            parent: Arc::clone(&self.top),
            name,
            is_dir: true,
        };
        self.moved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(moved);
        Ok(())
    }
}

/// Removes one entry `depth` levels below the work's start, a whole subtree for a directory (what
/// lies deeper than `DEPTH` moved up first: `Deep`).
pub(super) fn remove(entry: &Entry, depth: usize, deep: &Deep) -> nix::Result<()> {
    if entry.is_dir && depth >= DEPTH {
        return deep.move_up(entry);
    }
    if entry.is_dir {
        // ELOOP or ENOTDIR: no longer a directory since it was listed. Nothing is followed.
        let dir = Arc::new(open_to_empty(entry.parent.as_ref(), &entry.name)?);
        for inner in entries(&dir)? {
            remove(&inner, depth + 1, deep)?;
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
