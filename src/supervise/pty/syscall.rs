//! The system calls of the pty layer as `io::Result`s: a -1 becomes errno's error, and a call
//! interrupted by a signal is made again. Nothing here knows what a terminal is.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

pub fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: read writes at most `buf.len()` bytes into `buf`.
    let n = retry(|| unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })?;
    Ok(n as usize)
}

pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we borrow, changing its status flags only.
    let flags = retry(|| unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) })?;
    // SAFETY: as above; F_SETFL changes only the status flags of a descriptor we borrow.
    retry(|| unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
    Ok(())
}

/// A system call's -1 as the error in errno.
pub(super) fn cvt<T: Copy + PartialOrd + Default>(rc: T) -> io::Result<T> {
    if rc < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// [`cvt`], retried while the call is interrupted by a signal.
pub(super) fn retry<T: Copy + PartialOrd + Default>(mut call: impl FnMut() -> T) -> io::Result<T> {
    loop {
        match cvt(call()) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}
