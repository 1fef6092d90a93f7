//! The end of a start: the helper's report on the status socket, read once it was released. CMD
//! runs (and the broker answers its listener), or the helper is collected and its reason becomes
//! the error (not found, not executable, the sandbox). A CMD under a filter nobody answers never
//! runs on.

use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

use super::Spawned;
use crate::error::{Error, Result};
use crate::sandbox::exec::{NOT_EXECUTABLE, NOT_FOUND};
use crate::sandbox::handover;
use crate::supervise::broker::Pending;

pub(super) fn finish_start(
    pid: Pid,
    placed: Option<std::path::PathBuf>,
    status_read: &std::os::fd::OwnedFd,
    pending: Option<Pending>,
    shown: String,
) -> Result<Spawned> {
    let (listener, report) = handover::read_status(status_read);
    let Some((&code, message)) = report.split_first() else {
        let broker = match (pending, listener) {
            (None, _) => None,
            (Some(pending), Some(listener)) => {
                // The job's own cgroup, not one it shares with this supervisor (a job nested in
                // another job's cgroup has no cgroup of its own: its descendants then say who it
                // is). The one the fork placed it in is that, and needs no looking up.
                use crate::supervise::cgroup::of_process;
                let cgroup = placed.or_else(|| {
                    of_process(pid).filter(|cg| of_process(Pid::this()).as_ref() != Some(cg))
                });
                Some(pending.start(listener, cgroup))
            }
            // CMD runs under a filter nobody would answer: it must not run on.
            (Some(_), None) => {
                discard(pid);
                return Err(Error::Sandbox(
                    "the job's first process did not hand over its seccomp listener".into(),
                ));
            }
        };
        return Ok(Spawned { pid, broker });
    };
    if let Some(why) = pending.and_then(|p| p.failure()) {
        let _ = waitpid(pid, None);
        return Err(Error::Sandbox(why));
    }
    // CMD never ran: collect the helper so that no zombie is left, then say why.
    let _ = waitpid(pid, None).map(|s| matches!(s, WaitStatus::Exited(..)));
    let message = String::from_utf8_lossy(message).into_owned();
    Err(match code {
        NOT_FOUND => Error::CommandNotFound(shown),
        NOT_EXECUTABLE => Error::CommandNotExecutable {
            cmd: shown,
            reason: message,
        },
        _ => Error::Sandbox(message),
    })
}

/// Kills and collects the job's first process, held before CMD: it never runs.
pub(super) fn discard(pid: Pid) {
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
    let _ = waitpid(pid, None);
}
