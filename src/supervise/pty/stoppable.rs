//! Waiting and writing that a stop pipe interrupts: `poll` on the descriptor and on the stop pipe
//! together, so that a relay thread never sits in a call [`super::Relay::finish`] cannot end.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

use super::syscall::retry;

/// What ended a wait.
pub(super) enum Wake {
    /// The descriptor is ready (or reports an error or hang-up, which the next call returns).
    Ready,
    /// The stop pipe was closed.
    Stopped,
}

/// Waits until `fd` is ready for `events`, or `stop` is closed (which wins).
pub(super) fn wait(
    fd: BorrowedFd<'_>,
    events: libc::c_short,
    stop: BorrowedFd<'_>,
) -> io::Result<Wake> {
    let mut fds = [
        libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        },
        libc::pollfd {
            fd: stop.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // SAFETY: poll writes only the `revents` of the two entries.
    retry(|| unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) })?;
    Ok(if fds[1].revents != 0 {
        Wake::Stopped
    } else {
        Wake::Ready
    })
}

/// Writes all of `data` to `fd`, waiting (stoppably) whenever `fd` is non-blocking and full.
pub(super) fn write_all(
    fd: BorrowedFd<'_>,
    mut data: &[u8],
    stop: BorrowedFd<'_>,
) -> io::Result<Wake> {
    while !data.is_empty() {
        // SAFETY: write reads at most `data.len()` bytes of `data`.
        match retry(|| unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) }) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n as usize..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Wake::Stopped = wait(fd, libc::POLLOUT, stop)? {
                    return Ok(Wake::Stopped);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Wake::Ready)
}
