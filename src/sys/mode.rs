//! A directory's mode changed through a descriptor that names it and no link: opened with
//! `O_PATH|O_NOFOLLOW` (no right on the directory needed, none of its own followed), changed
//! through the descriptor's `/proc/self/fd` entry (`fchmod` refuses an `O_PATH` descriptor).
//! How isolate gives its own rights back to a directory a job locked (`chmod 000`), to list or
//! empty it.

use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use nix::fcntl::{openat, OFlag, AT_FDCWD};
use nix::sys::stat::{fchmodat, fstat, FchmodatFlags, Mode};

/// The directory `name` of `parent`, as an `O_PATH` descriptor; `ELOOP` or `ENOTDIR` when it is
/// not a directory (a link to one included).
pub fn open_path(parent: &impl AsFd, name: &OsStr) -> nix::Result<OwnedFd> {
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(parent, name, flags, Mode::empty())
}

/// The name in `/proc/self/fd` of the descriptor `fd`: a path that resolves to what the
/// descriptor names, whatever has been renamed or linked since.
pub fn proc_path(fd: &impl AsRawFd) -> String {
    format!("/proc/self/fd/{}", fd.as_raw_fd())
}

/// The permission bits of what `fd` names.
pub fn mode_of(fd: &impl AsFd) -> nix::Result<Mode> {
    Ok(Mode::from_bits_truncate(fstat(fd)?.st_mode))
}

/// Sets the permission bits of the directory `path` (an `O_PATH` descriptor) to `mode`.
pub fn set_mode(path: &OwnedFd, mode: Mode) -> nix::Result<()> {
    fchmodat(
        AT_FDCWD,
        proc_path(path).as_str(),
        mode,
        FchmodatFlags::FollowSymlink,
    )
}
