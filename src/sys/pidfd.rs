//! A pidfd: a descriptor for one process that cannot be confused with a later process given the
//! same pid, and that becomes readable when the process exits, so waiting for it costs nothing
//! until then. `wait_exit` is the one bounded wait on a process of isolate's.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// A pidfd of one process.
pub struct PidFd(OwnedFd);

impl PidFd {
    /// A pidfd of `pid` (with `flags`, such as `PIDFD_THREAD`), or the errno of `pidfd_open`
    /// (ESRCH: no such process; ENOSYS: a kernel before 5.3).
    pub fn open(pid: i32, flags: libc::c_uint) -> Result<PidFd, i32> {
        // SAFETY: pidfd_open takes two integers and returns a new descriptor or -1.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) };
        if raw < 0 {
            return Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
        // SAFETY: pidfd_open returned a fresh descriptor that nothing else owns.
        Ok(PidFd(unsafe { OwnedFd::from_raw_fd(raw as i32) }))
    }

    /// Sends `signal` to the process this pidfd holds (never to a later one given its pid); false
    /// when the kernel refused.
    pub fn signal(&self, signal: i32) -> bool {
        use std::os::fd::AsRawFd;
        // SAFETY: pidfd_send_signal on a descriptor we own, with no siginfo (NULL) and no flags.
        let sent = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.0.as_raw_fd(),
                signal,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        sent == 0
    }

    /// Waits at most `limit` for the process to exit; true when it has (it may still need reaping).
    pub fn exited_within(&self, limit: Duration) -> bool {
        let mut fds = [PollFd::new(self.0.as_fd(), PollFlags::POLLIN)];
        let ms = limit.as_millis().min(u128::from(u16::MAX)) as u16;
        matches!(poll(&mut fds, PollTimeout::from(ms)), Ok(n) if n > 0)
    }
}

impl AsFd for PidFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// Polls `done` until it returns `Some`, or `limit` passes (then `None`), sleeping on `pidfd` when
/// there is one (it wakes the moment the process exits) and in steps of `step` without one (a
/// kernel before 5.3).
pub fn wait_exit<T>(
    pidfd: Option<&PidFd>,
    limit: Duration,
    step: Duration,
    mut done: impl FnMut() -> Option<T>,
) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = done() {
            return Some(value);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        match pidfd {
            Some(fd) => {
                fd.exited_within(left.min(Duration::from_secs(60)));
            }
            None => std::thread::sleep(step.min(left)),
        }
    }
}
