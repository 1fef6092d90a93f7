//! The background supervisor's watchdog: its parent and a subreaper, waiting for it to end and
//! then killing whatever of the job is left (the one stop sequence, with no grace). It never
//! returns: it ends the middle process.

use std::time::Duration;

use nix::sys::wait::waitpid;
use nix::unistd::Pid;

use crate::supervise::cgroup::Cgroup;
use crate::supervise::stop::{Processes, Stop, Tree};

/// The watchdog: the supervisor's parent, and a subreaper, so that a supervisor killed with SIGKILL
/// does not leave an unsupervised job: whatever of the job is left when the supervisor has ended
/// (re-parented here, or in the job's cgroup) is killed. After a normal end nothing is left.
pub(super) fn watch(supervisor: Pid, job_id: &str) -> ! {
    loop {
        match waitpid(Pid::from_raw(-1), None) {
            Ok(status) if status.pid() == Some(supervisor) => break,
            Err(nix::errno::Errno::ECHILD) => break,
            _ => {}
        }
    }
    let cgroup = Cgroup::for_job(job_id);
    let tree = Tree {
        processes: Some(Processes::DescendantsOf(Pid::this())),
        cgroup: cgroup.as_ref(),
    };
    let mut stop = Stop::new(Duration::ZERO);
    while stop.round(&tree) > 0 {
        let _ = waitpid(Pid::from_raw(-1), None);
    }
    // Nothing of the job is left: its cgroup (removed only when empty) goes too.
    if let Some(cg) = &cgroup {
        cg.remove();
    }
    // SAFETY: ending the watchdog, which has nothing to flush.
    unsafe { libc::_exit(0) }
}
