//! A path as the caller would resolve it (its thread's working directory, its `/proc/self`),
//! opened as a path descriptor, and the address that names an open socket file itself. Nothing
//! here decides whether a connect is allowed.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::SUN_PATH;
use crate::supervise::broker::caller::Caller;
use crate::supervise::broker::errno;

/// `base/rest`, opened as a path.
fn own(rest: &Path, base: String) -> Result<OwnedFd, i32> {
    let full = Path::new(&base).join(rest);
    let full = CString::new(full.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    open_path_at(libc::AT_FDCWD, &full, 0)
}

/// Opens the socket file at `path` as the caller would find it: relative to its thread's working
/// directory, `/proc/self` and `/dev/fd` meaning the caller's. (A symlink the job planted that
/// points into `/proc/self` resolves as the broker's: at worst a refusal, never a wider grant,
/// since only the job's own sockets and those the policy names are ever connected.)
pub(super) fn resolve(caller: &Caller, path: &[u8]) -> Result<OwnedFd, i32> {
    let text = Path::new(std::ffi::OsStr::from_bytes(path));
    if path.first() != Some(&b'/') {
        // The caller thread's working directory, and the path beneath it, in one lookup.
        let cwd = crate::sys::proc_view::dir(caller.tid()).join("cwd");
        return own(text, cwd.display().to_string());
    }
    // The caller's own /proc directory (a thread's: its working directory, the descriptor table
    // it uses), for the names that mean "this process" in the caller's mouth.
    let me = crate::sys::proc_view::dir(caller.tid())
        .display()
        .to_string();
    for (prefix, base) in [
        ("/proc/self", me.clone()),
        // A thread's own directory, /proc/<tid>, is its thread-self.
        ("/proc/thread-self", me.clone()),
        ("/dev/fd", format!("{me}/fd")),
    ] {
        if let Ok(rest) = text.strip_prefix(prefix) {
            return own(rest, base);
        }
    }
    for (n, name) in ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
        .iter()
        .enumerate()
    {
        if text == Path::new(name) {
            return own(Path::new(&n.to_string()), format!("{me}/fd"));
        }
    }
    // From the caller's root: in the namespaces tier its mount namespace has mounts of its own
    // (its /dev/shm, its caches' overlays).
    let rest = text.strip_prefix("/").map_err(|_| libc::EINVAL)?;
    own(rest, format!("{me}/root"))
}

/// The address that names the socket file `file` itself: `/proc/self/fd/N` of the broker's
/// descriptor, valid while `file` is open.
pub fn address_of(file: &OwnedFd) -> Vec<u8> {
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let mut addr = Vec::with_capacity(SUN_PATH + path.len() + 1);
    addr.extend_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
    addr.extend_from_slice(path.as_bytes());
    addr.push(0);
    addr
}

/// `openat(dir, path, O_PATH)`, following symlinks as a connect does.
fn open_path_at(dir: RawFd, path: &CString, flags: libc::c_int) -> Result<OwnedFd, i32> {
    // SAFETY: `path` is a valid C string; openat returns a new descriptor or -1.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
