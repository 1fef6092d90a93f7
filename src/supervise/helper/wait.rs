//! The bounded wait on a helper's main process: its status the moment it exits (a pidfd wakes the
//! wait, sys::pidfd), and the tree stopped when the limit passes. It reaps the main process only;
//! the rest of the tree is reaped by `reap_rest`, for a bounded time.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::sys::pidfd::{wait_exit, PidFd};

/// How often the status is looked at again on a kernel without pidfds (before 5.3).
const STEP: Duration = Duration::from_millis(5);

/// How long the wait sleeps at a time once the main process has been killed.
const AFTER_KILL: Duration = Duration::from_secs(1);

/// Waits for `pid` (a child of this process) at most `limit`, calling `stop` once it passes; the
/// status as a shell reports it.
pub fn wait(pid: Pid, limit: Duration, stop: impl Fn()) -> i32 {
    let pidfd = PidFd::open(pid.as_raw(), 0).ok();
    let mut reaped = || loop {
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return Some(code),
            Ok(WaitStatus::Signaled(_, sig, _)) => return Some(128 + sig as i32),
            Ok(_) => return None,
            Err(Errno::EINTR) => continue,
            Err(_) => return Some(125),
        }
    };
    if let Some(status) = wait_exit(pidfd.as_ref(), limit, STEP, &mut reaped) {
        return status;
    }
    stop();
    let _ = kill(pid, Signal::SIGKILL);
    loop {
        if let Some(status) = wait_exit(pidfd.as_ref(), AFTER_KILL, STEP, &mut reaped) {
            return status;
        }
    }
}

/// Reaps every child of this process that has ended, until none is left (ECHILD) or `limit`
/// passes.
pub fn reap_rest(limit: Duration) {
    let _ = wait_exit(None, limit, STEP, || loop {
        match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => return None,
            Ok(_) => {}
            Err(Errno::EINTR) => {}
            Err(_) => return Some(()),
        }
    });
}
