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

/// The verdict on a signal to another process (a kernel without Landlock's signal scope): let
/// through to a process or thread of the job's, or to a process group all of whose processes are
/// the job's, refused (EPERM, counted) otherwise; `kill(-1)`, every process the caller may signal,
/// always refused. A pidfd's signal is sent by the broker itself, to the process the pidfd it took
/// names (the job's descriptor table may change after the check).
pub(super) fn signal(
    call: &Call,
    members: &Members,
    take: impl Fn(u64) -> Result<std::os::fd::OwnedFd, Decision>,
    read: impl Fn(u64, usize) -> Result<Vec<u8>, i32>,
) -> Decision {
    let int = |i: usize| call.args[i] as u32 as i32;
    let refused = || {
        Decision::Decided(Decided {
            verdict: Verdict::RefusedAs(libc::EPERM),
            kind: Kind::Process,
            socket: None,
            addr: Vec::new(),
        })
    };
    let allowed = |ok: bool| match ok {
        true => Decision::Decided(Decided {
            verdict: Verdict::Done(Answer::Continue),
            kind: Kind::Process,
            socket: None,
            addr: Vec::new(),
        }),
        false => refused(),
    };
    match call.nr {
        libc::SYS_kill => match int(0) {
            -1 => refused(),
            pid if pid < -1 => allowed(group_of_the_job(-pid, members)),
            pid => allowed(of_the_job(pid, members)),
        },
        libc::SYS_pidfd_send_signal => {
            let pidfd = match take(call.args[0]) {
                Ok(fd) => fd,
                Err(decision) => return decision,
            };
            if !pidfd_of_the_job(&pidfd, members) {
                return refused();
            }
            let info = match call.args[2] {
                0 => None,
                addr => match read(addr, std::mem::size_of::<libc::siginfo_t>()) {
                    Ok(bytes) => Some(bytes),
                    Err(e) => return Decided::failed(e),
                },
            };
            let info_ptr = info
                .as_ref()
                .map_or(std::ptr::null(), |b| b.as_ptr().cast::<libc::c_void>());
            // SAFETY: pidfd_send_signal on a pidfd the broker holds, with a siginfo of its size
            // read from the caller (or none), alive across the call.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    std::os::fd::AsRawFd::as_raw_fd(&pidfd),
                    int(1),
                    info_ptr,
                    call.args[3] as u32,
                )
            };
            Decision::Decided(Decided {
                verdict: Verdict::Done(match rc {
                    0 => Answer::Value(0),
                    _ => Answer::Errno(super::errno()),
                }),
                kind: Kind::Process,
                socket: None,
                addr: Vec::new(),
            })
        }
        // tkill(tid), tgkill(tgid, tid), rt_sigqueueinfo(tgid), rt_tgsigqueueinfo(tgid, tid).
        _ => allowed(of_the_job(int(0), members)),
    }
}

/// Every process of process group `group` is the job's (and there is one).
fn group_of_the_job(group: i32, members: &Members) -> bool {
    let mut any = false;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(listed) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Some(pid) = crate::sys::proc_view::ours(listed) else {
            continue;
        };
        let pgrp = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|stat| {
                let after = stat.get(stat.rfind(')')? + 1..)?.to_string();
                after.split_whitespace().nth(2)?.parse::<i32>().ok()
            })
            .and_then(crate::sys::proc_view::ours);
        if pgrp == Some(group) {
            if !members.contains(nix::unistd::Pid::from_raw(pid)) {
                return false;
            }
            any = true;
        }
    }
    any
}

/// The process a pidfd names is the job's (its `Pid:` in the broker's fdinfo).
fn pidfd_of_the_job(pidfd: &std::os::fd::OwnedFd, members: &Members) -> bool {
    let fd = std::os::fd::AsRawFd::as_raw_fd(pidfd);
    let pid = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Pid:"))
                .and_then(|v| v.trim().parse::<i32>().ok())
        })
        .and_then(crate::sys::proc_view::ours);
    pid.is_some_and(|pid| pid > 0 && members.contains(nix::unistd::Pid::from_raw(pid)))
}
