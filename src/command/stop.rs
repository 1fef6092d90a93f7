//! `isolate stop JOB [--grace DUR]`: SIGTERM (and SIGCONT) to every process of the job's tree,
//! SIGKILL to what remains after the grace period, then wait for the supervisor to record the end.
//! Stopping a job that has ended is harmless (status 0).

use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::cli::StopArgs;
use crate::command::report_error;
use crate::job::record::{Record, State};
use crate::job::store;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::tree;

/// How long the supervisor may take to settle the worktree and write the record after its tree ended.
const SETTLE_LIMIT: Duration = Duration::from_secs(300);

pub fn run(args: StopArgs) -> i32 {
    let found = store::state_dir().and_then(|state| store::resolve(&state, &args.job));
    let (dir, record) = match found {
        Ok(found) => found,
        Err(e) => {
            report_error(&e);
            return 1;
        }
    };
    match record.effective_state() {
        State::Running => {
            stop_tree(&record, args.grace);
            let deadline = Instant::now() + SETTLE_LIMIT;
            while Instant::now() < deadline {
                match store::read_record(&dir) {
                    Ok(r) if r.effective_state() == State::Running => {
                        thread::sleep(Duration::from_millis(20))
                    }
                    _ => return 0,
                }
            }
            say!(
                "isolate: job {} stopped, but its supervisor has not recorded the end yet",
                record.id
            );
            1
        }
        State::Lost => {
            kill_leftovers(&record);
            0
        }
        _ => 0,
    }
}

/// The stop sequence from outside the supervisor: the job's processes are the supervisor's
/// descendants (it is their subreaper) and, where there is one, the members of its cgroup.
pub fn stop_tree(record: &Record, grace: Duration) {
    let supervisor = Pid::from_raw(record.supervisor_pid);
    let cgroup = record
        .cgroup
        .as_deref()
        .and_then(|p| Cgroup::open(std::path::Path::new(p)));
    let members = || {
        let mut pids = tree::descendants(supervisor);
        pids.extend(cgroup.as_ref().map(Cgroup::pids).unwrap_or_default());
        pids.retain(|&p| p != supervisor);
        pids
    };
    let deadline = Instant::now() + grace;
    let mut termed = std::collections::HashSet::new();
    loop {
        let pids = members();
        if pids.is_empty() || !record.supervisor_alive() {
            break;
        }
        if Instant::now() >= deadline {
            if let Some(cg) = &cgroup {
                cg.kill();
            }
            for pid in pids {
                let _ = kill(pid, Signal::SIGKILL);
            }
        } else {
            for pid in pids {
                if termed.insert(pid) {
                    let _ = kill(pid, Signal::SIGTERM);
                    let _ = kill(pid, Signal::SIGCONT);
                }
            }
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// A lost job (its supervisor and watchdog are gone): SIGKILL to whatever is left of it, found by
/// its cgroup or by the session its main process led.
pub fn kill_leftovers(record: &Record) {
    if let Some(cg) = record
        .cgroup
        .as_deref()
        .and_then(|p| Cgroup::open(std::path::Path::new(p)))
    {
        cg.kill();
    }
    if let Some(sid) = record.pid {
        for pid in tree::in_session(sid) {
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
}
