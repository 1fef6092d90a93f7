//! The sentinel, for a job with no cgroup: a process beside the job's first one that the job
//! cannot signal and that can signal nothing but the job, which ends whatever is left of the job
//! once the supervisor is gone (killed with SIGKILL: a lost job). Without a cgroup the job's
//! processes are known only as the supervisor's descendants, and a daemon that left the job's
//! session (`setsid`, a double fork) is no one's once the supervisor has died.
//!
//! The kernel tells the job's processes apart: the first process puts itself in a Landlock domain
//! that scopes signals and handles nothing else, then clones the sentinel as a child of its own
//! parent (`CLONE_PARENT`: the supervisor's, reaped and stopped with the rest of the tree), and
//! only then enters the job's own domain, nested in that one. A process may signal only processes
//! in its own domain or in domains nested in it: the sentinel reaches the job's processes, and
//! only them (every other `kill` it sends fails with `EPERM`); the job cannot signal, nor trace,
//! the sentinel. When the supervisor exits, the sentinel sends SIGKILL to every process on the
//! machine, round after round, until a round kills nothing. Its parent's death continues it,
//! should the supervisor have held it still with the rest of the tree.
//!
//! The stop sequence's SIGTERM reaches the sentinel too (it is one of the supervisor's children),
//! and does not end it: a supervisor killed within the grace period would otherwise leave a daemon
//! that ignores SIGTERM with no one to end it. The sentinel takes it as word that the job is
//! ending, and from then on ends itself once the supervisor has no child but itself (nothing of
//! the job is left).

use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

use crate::error::Result;
use crate::sandbox::landlock;
use crate::sandbox::step_failed;
use crate::sys::pidfd::PidFd;

/// The most rounds of kills, and the pause between two.
const ROUNDS: usize = 500;
const PAUSE: Duration = Duration::from_millis(10);
/// How often the supervisor is looked for where no pidfd of it could be had.
const PARENT_POLL: Duration = Duration::from_millis(200);
/// How soon, once the job is ending, the sentinel first looks whether anything of it is left (then
/// twice as long each time, up to `PARENT_POLL`).
const ENDING_POLL: Duration = Duration::from_millis(5);

/// Enters the domain around the job's and starts the sentinel in it; returns in this process.
pub(super) fn post(holder: Option<i32>) -> Result<()> {
    landlock::restrict_signals()?;
    // SAFETY: getppid has no preconditions.
    let supervisor = unsafe { libc::getppid() };
    // SAFETY: a clone with no new stack is a fork: the child runs on a copy of this stack. This
    // process has no other thread (the helper, or the child of a single-threaded supervisor), so
    // the copy holds no lock another thread held.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::CLONE_PARENT | libc::SIGCHLD,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    match pid {
        -1 => Err(step_failed("cannot start the sentinel")(
            std::io::Error::last_os_error(),
        )),
        0 => watch(supervisor, holder),
        _ => Ok(()),
    }
}

/// The sentinel: no descriptor of the job's (the status socket's end of file tells the supervisor
/// the job has exec'd; the terminal's, that it hung up), a session of its own (no signal of the
/// job's terminal), then a wait for the supervisor's exit, and the rounds.
fn watch(supervisor: i32, holder: Option<i32>) -> ! {
    // SAFETY: close_range, setsid, PR_SET_NAME and PR_SET_PDEATHSIG change only this process's
    // descriptors, session, name (`ps` shows it as what it is; 15 bytes at most) and the signal
    // its parent's death sends it.
    unsafe {
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        libc::setsid();
        libc::prctl(libc::PR_SET_NAME, c"isolate-guard".as_ptr());
        // A supervisor stopped by the job's terminal (Ctrl-Z) holds the tree still, this process
        // too (stop/freeze.rs); should it then be killed, this process must go on to end the rest.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGCONT as libc::c_ulong);
    }
    let ending = ending_signals();
    // SAFETY: getppid has no preconditions.
    let parent = || unsafe { libc::getppid() };
    // Still the supervisor's child: a pidfd is of the supervisor, not of a process given its pid
    // later. Without one, the supervisor is looked for: this process is re-parented the moment
    // the supervisor exits.
    let pidfd = PidFd::open(supervisor, 0).ok();
    let mut stopping = false;
    let mut ending_poll = ENDING_POLL;
    while parent() == supervisor {
        let wait = match (stopping, &pidfd) {
            (true, _) => ending_poll,
            (false, Some(_)) => Duration::MAX,
            (false, None) => PARENT_POLL,
        };
        if stopping {
            ending_poll = (ending_poll * 2).min(PARENT_POLL);
        }
        let woken = wait_for(pidfd.as_ref(), ending.as_ref(), wait);
        if woken.supervisor_exited {
            break;
        }
        stopping |= woken.ending;
        if stopping && nothing_left(supervisor, holder) {
            // SAFETY: ending the sentinel, which has nothing to flush.
            unsafe { libc::_exit(0) }
        }
    }
    for _ in 0..ROUNDS {
        if kill_round() == 0 {
            break;
        }
        std::thread::sleep(PAUSE);
    }
    // SAFETY: ending the sentinel, which has nothing to flush.
    unsafe { libc::_exit(0) }
}

/// SIGTERM, SIGHUP and SIGINT blocked and read from a descriptor instead: they end the job, not
/// the sentinel. `None` where no signalfd could be had (they are ignored then, and the stop is not
/// seen: the sentinel ends with the supervisor, or at the SIGKILL that ends the grace period).
fn ending_signals() -> Option<SignalFd> {
    let mut set = SigSet::empty();
    for signal in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT] {
        set.add(signal);
    }
    let blocked = set.thread_block().is_ok();
    let fd = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC).ok();
    if fd.is_none() || !blocked {
        for signal in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            // SAFETY: SIG_IGN for a signal is a disposition, no handler runs.
            unsafe { libc::signal(signal, libc::SIG_IGN) };
        }
    }
    fd
}

/// What woke the sentinel.
struct Woken {
    supervisor_exited: bool,
    /// A signal that ends the job came (the stop sequence has begun).
    ending: bool,
}

/// Waits at most `wait` for the supervisor's exit or a signal that ends the job.
fn wait_for(pidfd: Option<&PidFd>, ending: Option<&SignalFd>, wait: Duration) -> Woken {
    let mut fds = Vec::with_capacity(2);
    if let Some(pidfd) = pidfd {
        fds.push(PollFd::new(pidfd.as_fd(), PollFlags::POLLIN));
    }
    if let Some(ending) = ending {
        fds.push(PollFd::new(ending.as_fd(), PollFlags::POLLIN));
    }
    let timeout = match wait {
        Duration::MAX => PollTimeout::NONE,
        wait => PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX),
    };
    if fds.is_empty() {
        std::thread::sleep(wait.min(PARENT_POLL));
    } else {
        let _ = poll(&mut fds, timeout);
    }
    let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
    let supervisor_exited = pidfd.is_some() && fds.first().is_some_and(ready);
    let mut ending_now = false;
    if let Some(ending) = ending {
        // Every signal read: one of them is enough.
        while let Ok(Some(_)) = ending.read_signal() {
            ending_now = true;
        }
    }
    Woken {
        supervisor_exited,
        ending: ending_now,
    }
}

/// Whether nothing of the job is left: the supervisor, a child subreaper every process of the job
/// descends from, has no child but this one. Its children lists hold a process from its fork to its
/// reaping, and an orphan is moved to them before its parent is a zombie: a process that forks and
/// exits over and over (at a new pid each time) is always there. Where the lists cannot be read,
/// whether any process is there for this one to signal (the job's alone), which such a process can
/// slip past. The holder of the job's namespaces (`holder`), a child of the supervisor's, is not
/// the job's.
fn nothing_left(supervisor: i32, holder: Option<i32>) -> bool {
    match children(supervisor) {
        Some(children) => children
            .iter()
            .all(|&pid| pid == std::process::id() as i32 || Some(pid) == holder),
        None => !signals_any(),
    }
}

/// The children of every thread of `pid` (`/proc/PID/task/TID/children`).
fn children(pid: i32) -> Option<Vec<i32>> {
    let mut all = Vec::new();
    for task in std::fs::read_dir(crate::sys::proc_view::dir(pid).join("task")).ok()? {
        let listed = std::fs::read_to_string(task.ok()?.path().join("children")).ok()?;
        all.extend(
            listed
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
                .filter_map(crate::sys::proc_view::ours),
        );
    }
    Some(all)
}

/// Whether any process but this one is there for the sentinel to signal (the job's alone: a
/// signal of 0 is checked against the Landlock domain as any other).
fn signals_any() -> bool {
    // SAFETY: kill takes two integers; a signal of 0 is sent to none.
    others().any(|pid| unsafe { libc::kill(pid, 0) } == 0)
}

/// SIGKILL to every process but this one; how many the kernel let it kill (the job's alone).
fn kill_round() -> usize {
    others()
        // SAFETY: kill takes two integers; the Landlock domain limits whom it reaches.
        .filter(|&pid| unsafe { libc::kill(pid, libc::SIGKILL) } == 0)
        .count()
}

/// Every process on the machine but this one and init, as `/proc` lists them now (none where it
/// cannot be read).
fn others() -> impl Iterator<Item = i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(move |&pid| pid != me && pid > 1)
}
