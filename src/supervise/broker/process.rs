//! The calls that name another process, handed over where the filter sees a pid other than the
//! caller's own (0): its scheduling, affinity, priority and I/O priority, allowed when the process
//! (or thread) named is one of the job's, refused otherwise; and System V IPC and POSIX message
//! queues outside an IPC namespace of the job's own, refused and counted. A pid is a register's
//! value, never memory the job can change after the check: what the kernel then does with the call
//! (`Continue`) is judged on the same pid. One window remains: a process of the job that ends and
//! whose pid is reused by a process of the user's between the check and the call.

use super::decided::{Decided, Decision, Kind};
use super::listeners::Members;
use super::Verdict;
use crate::sandbox::notify::{Answer, Call};

/// `setpriority`'s and `ioprio_set`'s `which` for one process (`PRIO_PROCESS`,
/// `IOPRIO_WHO_PROCESS`).
const PRIO_PROCESS: u64 = 0;
const IOPRIO_WHO_PROCESS: u64 = 1;

/// The verdict on `call`, one of the IPC calls or of those naming a process.
pub(super) fn decide(call: &Call, members: &Members) -> Decision {
    let refused = |kind: Kind| {
        Decision::Decided(Decided {
            verdict: Verdict::RefusedAs(libc::EPERM),
            kind,
            socket: None,
            addr: Vec::new(),
        })
    };
    let low = |i: usize| call.args[i] & 0xffff_ffff;
    let named = match call.nr {
        libc::SYS_sched_setaffinity
        | libc::SYS_sched_setscheduler
        | libc::SYS_sched_setparam
        | libc::SYS_sched_setattr => Some(low(0)),
        libc::SYS_setpriority if low(0) == PRIO_PROCESS => Some(low(1)),
        libc::SYS_ioprio_set if low(0) == IOPRIO_WHO_PROCESS => Some(low(1)),
        libc::SYS_setpriority | libc::SYS_ioprio_set => None,
        _ => return refused(Kind::Ipc),
    };
    match named.and_then(|id| i32::try_from(id).ok()) {
        Some(id) if of_the_job(id, members) => Decision::Decided(Decided {
            verdict: Verdict::Done(Answer::Continue),
            kind: Kind::Process,
            socket: None,
            addr: Vec::new(),
        }),
        _ => refused(Kind::Process),
    }
}

/// Whether `id`, a process or thread id, is a thread of one of the job's processes.
fn of_the_job(id: i32, members: &Members) -> bool {
    if id <= 0 {
        return false;
    }
    let Ok(status) = std::fs::read_to_string(crate::sys::proc_view::dir(id).join("status")) else {
        return false;
    };
    let tgid = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse::<i32>().ok())
        .and_then(crate::sys::proc_view::ours);
    tgid.is_some_and(|tgid| members.contains(nix::unistd::Pid::from_raw(tgid)))
}
