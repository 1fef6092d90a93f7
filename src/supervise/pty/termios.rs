//! Reading and setting a terminal's termios, the two calls every other part of the pty layer goes
//! through; nothing here decides which settings a terminal gets.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use super::syscall::retry;

pub(super) fn get_termios(fd: BorrowedFd<'_>) -> io::Result<libc::termios> {
    // SAFETY: termios is plain data, filled in by tcgetattr.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: tcgetattr writes exactly one termios into `t`, which outlives the call.
    retry(|| unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) })?;
    Ok(t)
}

pub(super) fn set_termios(
    fd: BorrowedFd<'_>,
    when: libc::c_int,
    t: &libc::termios,
) -> io::Result<()> {
    // SAFETY: tcsetattr only reads `t`.
    retry(|| unsafe { libc::tcsetattr(fd.as_raw_fd(), when, t) })?;
    Ok(())
}
