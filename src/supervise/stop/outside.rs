//! The stop sequence run from outside a job's supervisor, by `stop`, `rm --force` and `prune`: the
//! job's processes are the supervisor's descendants (it is their subreaper) and, where there is one,
//! the members of its cgroup. The supervisor reaps them and records the end; nothing here waits for
//! a status. A queued job has no processes yet: its waiter is asked to end.

use std::path::Path;
use std::thread;
use std::time::Duration;

use nix::unistd::Pid;

use crate::job::record::Record;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::stop::{Processes, Stop, Tree};
use crate::sys::pidfd::{wait_exit, PidFd};

/// How often the tree is walked again while it is being stopped.
const STEP: Duration = Duration::from_millis(20);

/// The cgroup a record names, if it still exists and is the job's.
fn cgroup_of(record: &Record) -> Option<Cgroup> {
    record
        .cgroup
        .as_deref()
        .and_then(|p| Cgroup::of_record(Path::new(p), record.id.as_str()))
}

/// Stops a running job's tree: SIGTERM and SIGCONT, SIGKILL after `grace`, until nothing of the
/// tree runs (its ended processes are the supervisor's to reap) or its supervisor is gone. A
/// supervisor the user stopped (Ctrl-Z on an interactive job) is continued first, so that it can
/// reap and record the end; one that stops again (a background process group may not set its
/// terminal's modes) records it once brought back to the foreground.
pub fn stop_tree(record: &Record, grace: Duration) {
    let cgroup = cgroup_of(record);
    let supervisor = Pid::from_raw(record.supervisor_pid);
    if record.supervisor_alive() {
        let _ = nix::sys::signal::kill(supervisor, nix::sys::signal::Signal::SIGCONT);
    }
    let tree = Tree {
        processes: Some(Processes::DescendantsOf(supervisor)),
        cgroup: cgroup.as_ref(),
    };
    let mut stop = Stop::new(grace);
    let mut ended = || {
        let left = stop.round(&tree) > 0
            && !tree
                .members()
                .iter()
                .all(|pid| crate::sys::process::ended(pid.as_raw()));
        (!record.supervisor_alive() || !left).then_some(())
    };
    if wait_exit(None, grace, STEP, &mut ended).is_none() {
        while ended().is_none() {
            thread::sleep(STEP);
        }
    }
}

/// Stops a queued job: SIGTERM to its waiter, the process its record names, which records that
/// the job never ran. Through a pidfd whose process is checked against the record's start time
/// once the pidfd holds it, so that a later process given the same pid is never signalled.
pub fn stop_waiter(record: &Record) {
    let Ok(pidfd) = PidFd::open(record.supervisor_pid, 0) else {
        return;
    };
    if record.supervisor_alive() {
        pidfd.signal(libc::SIGTERM);
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

/// Whether the session `pid` names is still the job's: only while its main process, which led it,
/// lives, told by the start time recorded (without one it cannot be told, and is left alone). Once
/// that process is gone, nothing tells the job's session from another led by the same pid: the
/// kernel gives the pid again as soon as no process is in the job's session, and a new leader that
/// exits leaves a session of that id with none of the job's in it (a user's daemon, which was
/// killed so). What is left of a job then is its cgroup's, or was its sentinel's to kill when the
/// supervisor died (docs/supervise.md).
fn session_is_the_jobs(record: &Record, pid: i32) -> bool {
    let start = crate::sys::process::start_time(pid);
    start.is_some() && start == record.pid_start
}
