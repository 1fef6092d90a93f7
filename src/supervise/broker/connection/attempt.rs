//! The connect itself: the broker's own attempt, bounded to a millisecond, and a worker's end of
//! one that must wait, bounded by the job's own send timeout. Both answer as the job's call would.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::sockopt::{option, send_timeout, set_send_timeout};
use crate::sandbox::notify::Answer;
use crate::supervise::broker::errno;

/// How long the broker's own attempt may wait.
const ATTEMPT: Duration = Duration::from_millis(1);

/// `connect(socket, addr)`, its result as the job's call returns it.
pub(super) fn connect(socket: &OwnedFd, addr: &[u8]) -> Answer {
    // SAFETY: `addr` is valid for its length; connect only reads it.
    let rc = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Answer::Value(0)
    } else {
        Answer::Errno(errno())
    }
}

/// Where the connection stands after the broker's own attempt.
pub(super) enum Attempt {
    Done(Answer),
    /// It must wait: a worker finishes it.
    Waits,
}

/// The broker's attempt, bounded by `ATTEMPT` (the job's timeout restored after it: another thread
/// of the job changing it in these microseconds, on a socket not yet connected, is not heeded).
pub(super) fn attempt(socket: &OwnedFd, addr: &[u8], unix: bool) -> Attempt {
    let Some(before) = send_timeout(socket) else {
        return Attempt::Waits;
    };
    let short = libc::timeval {
        tv_sec: 0,
        tv_usec: ATTEMPT.as_micros() as libc::suseconds_t,
    };
    if !set_send_timeout(socket, &short) {
        return Attempt::Waits;
    }
    let answer = connect(socket, addr);
    set_send_timeout(socket, &before);
    match answer {
        Answer::Errno(libc::EAGAIN) if unix => Attempt::Waits,
        Answer::Errno(libc::EINPROGRESS) if !unix => Attempt::Waits,
        answer => Attempt::Done(answer),
    }
}

/// A worker's end of a connect that must wait, bounded by the job's own send timeout.
pub(super) fn finish(socket: &OwnedFd, addr: &[u8], unix: bool) -> Answer {
    if unix {
        return connect(socket, addr);
    }
    let limit = send_timeout(socket)
        .map(|t| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64))
        .filter(|t| !t.is_zero());
    let timeout = match limit {
        Some(t) => PollTimeout::try_from(t).unwrap_or(PollTimeout::MAX),
        None => PollTimeout::NONE,
    };
    loop {
        let mut fds = [PollFd::new(
            std::os::fd::AsFd::as_fd(socket),
            PollFlags::POLLOUT,
        )];
        match poll(&mut fds, timeout) {
            Ok(0) => return Answer::Errno(libc::EINPROGRESS),
            Ok(_) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Answer::Errno(e as i32),
        }
    }
    match option(socket, libc::SO_ERROR) {
        Ok(0) => Answer::Value(0),
        Ok(e) | Err(e) => Answer::Errno(e),
    }
}
