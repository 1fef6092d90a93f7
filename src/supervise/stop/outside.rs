//! The stop sequence run from outside a job's supervisor, by `stop`, `rm --force` and `prune`: the
//! job's processes are the supervisor's descendants (it is their subreaper) and, where there is one,
//! the members of its cgroup. The supervisor reaps them and records the end; nothing here waits for
//! a status.

use std::path::Path;
use std::thread;
use std::time::Duration;

use nix::unistd::Pid;

use crate::job::record::Record;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::stop::{Processes, Stop, Tree};
use crate::sys::pidfd::wait_exit;

/// How often the tree is walked again while it is being stopped.
const STEP: Duration = Duration::from_millis(20);

/// The cgroup a record names, if it still exists.
fn cgroup_of(record: &Record) -> Option<Cgroup> {
    record
        .cgroup
        .as_deref()
        .and_then(|p| Cgroup::open(Path::new(p)))
}

/// Stops a running job's tree: SIGTERM and SIGCONT, SIGKILL after `grace`, until nothing of the
/// tree is left or its supervisor is gone.
pub fn stop_tree(record: &Record, grace: Duration) {
    let cgroup = cgroup_of(record);
    let tree = Tree {
        processes: Some(Processes::DescendantsOf(Pid::from_raw(
            record.supervisor_pid,
        ))),
        cgroup: cgroup.as_ref(),
    };
    let mut stop = Stop::new(grace);
    let mut ended = || (!record.supervisor_alive() || stop.round(&tree) == 0).then_some(());
    if wait_exit(None, grace, STEP, &mut ended).is_none() {
        while ended().is_none() {
            thread::sleep(STEP);
        }
    }
}

/// A lost job (its supervisor and watchdog are gone): SIGKILL to whatever is left of it, found by
/// its cgroup or by the session its main process led.
pub fn kill_leftovers(record: &Record) {
    let cgroup = cgroup_of(record);
    let tree = Tree {
        processes: record
            .pid
            .filter(|&pid| session_is_the_jobs(record, pid))
            .map(Processes::Session),
        cgroup: cgroup.as_ref(),
    };
    Stop::new(Duration::ZERO).round(&tree);
    // Killed: the empty cgroup goes too (it is removed only when empty).
    if let Some(cg) = &cgroup {
        let _ = wait_empty(cg);
        cg.remove();
    }
}

/// Waits a little for a killed cgroup's processes to be gone.
fn wait_empty(cgroup: &crate::supervise::cgroup::Cgroup) -> bool {
    crate::sys::pidfd::wait_exit(
        None,
        Duration::from_secs(2),
        Duration::from_millis(10),
        || cgroup.pids().is_empty().then_some(()),
    )
    .is_some()
}

/// Whether the session `pid` names is still the job's. While any process of the job's session
/// lives, the kernel gives its id to no new process; once none does, the pid may lead a new
/// session (the user's next shell). A live process with that pid is the job's main process only
/// if its start time is the one recorded; without a recorded start time it cannot be told, and is
/// left alone. With no live process of that pid, what is left in the session is the job's.
fn session_is_the_jobs(record: &Record, pid: i32) -> bool {
    match crate::sys::process::start_time(pid) {
        None => true,
        Some(start) => record.pid_start == Some(start),
    }
}
