//! The two directions of the relay, each one thread's loop: the user's keystrokes to the master,
//! and the master to the user's terminal. Neither may block where the stop pipe cannot wake it.

use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU8, Ordering};

use super::relay::RelayEnd;
use super::screen::Screen;
use super::stoppable::{wait, write_all, Wake};
use super::syscall::read;

/// One direction's buffer: large enough for a burst of terminal output, small enough for the
/// supervisor's memory budget (two of them in all).
const BUF_SIZE: usize = 16 * 1024;

/// User's terminal -> master, until the input ends, the job's side is gone, or `stop`.
pub(super) fn relay_input(input: BorrowedFd<'_>, master: BorrowedFd<'_>, stop: BorrowedFd<'_>) {
    let mut buf = vec![0u8; BUF_SIZE];
    loop {
        // Wait before reading: a blocking read could not be stopped.
        if !matches!(wait(input, libc::POLLIN, stop), Ok(Wake::Ready)) {
            return;
        }
        let n = match read(input, &mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            // EIO: the user's terminal hung up; the supervisor hears of it by SIGHUP.
            Err(_) => return,
        };
        // An error here is EIO: every holder of the slave is gone. The rest of the input is
        // the job's no more.
        if !matches!(write_all(master, &buf[..n], stop), Ok(Wake::Ready)) {
            return;
        }
    }
}

/// Master -> user's terminal, until every holder of the slave has closed it, or `stop`; what was
/// written left changed of the terminal (screen.rs), in `left` (`Left::bits`).
pub(super) fn relay_output(
    master: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    stop: BorrowedFd<'_>,
    left: &AtomicU8,
) -> RelayEnd {
    let mut buf = vec![0u8; BUF_SIZE];
    let mut failed = None;
    let mut screen = Screen::default();
    loop {
        let n = match read_master(master, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                match wait(master, libc::POLLIN, stop) {
                    Ok(Wake::Ready) => continue,
                    Ok(Wake::Stopped) => return RelayEnd::TimedOut,
                    Err(e) => return RelayEnd::MasterFailed(e),
                }
            }
            Err(e) => return RelayEnd::MasterFailed(e),
        };
        if failed.is_some() {
            continue;
        }
        screen.feed(&buf[..n]);
        left.store(screen.left().bits(), Ordering::Relaxed);
        match write_all(output, &buf[..n], stop) {
            Ok(Wake::Ready) => {}
            Ok(Wake::Stopped) => return RelayEnd::TimedOut,
            Err(e) => failed = Some(e),
        }
    }
    match failed {
        None => RelayEnd::Drained,
        Some(e) => RelayEnd::OutputFailed(e),
    }
}

/// `read` on the master, where the end is EIO on Linux rather than 0: once the last holder of
/// the slave closes it, the master returns what was still buffered, then EIO (pty(7)).
pub(super) fn read_master(master: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    match read(master, buf) {
        Err(e) if e.raw_os_error() == Some(libc::EIO) => Ok(0),
        other => other,
    }
}
