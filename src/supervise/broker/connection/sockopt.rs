//! The socket options the broker reads and sets on the job's socket: one int option, and the send
//! timeout that bounds a connect's wait. Nothing here connects.

use std::os::fd::{AsRawFd, OwnedFd};

use crate::supervise::broker::errno;

/// `getsockopt(socket, SOL_SOCKET, option)` as an int.
pub fn option(socket: &OwnedFd, option: libc::c_int) -> Result<libc::c_int, i32> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(errno())
    }
}

pub(super) fn send_timeout(socket: &OwnedFd) -> Option<libc::timeval> {
    let mut value = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&mut value as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(value)
}

pub(super) fn set_send_timeout(socket: &OwnedFd, value: &libc::timeval) -> bool {
    // SAFETY: setsockopt reads one timeval of ours.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (value as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    rc == 0
}
