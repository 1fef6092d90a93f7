//! The child's side of the job's terminal: between fork and exec, the pty's slave becomes its
//! controlling terminal and its standard descriptors. Only async-signal-safe calls here; it must
//! never take a terminal that is another session's.

use std::io;
use std::os::fd::RawFd;

/// For the child, between fork and exec, after `setsid`: makes `slave` its controlling terminal
/// and its descriptors 0, 1 and 2. `slave` should be close-on-exec (as [`Pty::open`] makes it),
/// so that exec leaves the job with the standard descriptors only.
///
/// `TIOCSCTTY` is given 0, never 1: the call fails (EPERM) rather than steal a terminal that is
/// already another session's, which a root supervisor could otherwise do. It also makes the
/// caller's process group the terminal's foreground group, so the job's Ctrl-C reaches it.
///
/// # Safety
/// Only async-signal-safe calls (ioctl, dup2, fcntl); meant for `pre_exec`. It replaces the
/// calling process's descriptors 0, 1 and 2.
pub unsafe fn attach_controlling_terminal(slave: RawFd) -> io::Result<()> {
    if libc::ioctl(slave, libc::TIOCSCTTY, 0 as libc::c_int) < 0 {
        return Err(io::Error::last_os_error());
    }
    for target in 0..=2 {
        if slave == target {
            // dup2(fd, fd) does nothing, so it would leave close-on-exec set on the very
            // descriptor the job needs: clear the flag by hand.
            if libc::fcntl(target, libc::F_SETFD, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            continue;
        }
        while libc::dup2(slave, target) < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    Ok(())
}
