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

use std::os::fd::AsFd;
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::error::Result;
use crate::sandbox::landlock;
use crate::sandbox::step_failed;
use crate::sys::pidfd::PidFd;

/// The most rounds of kills, and the pause between two.
const ROUNDS: usize = 500;
const PAUSE: Duration = Duration::from_millis(10);
/// How often the supervisor is looked for where no pidfd of it could be had.
const PARENT_POLL: Duration = Duration::from_millis(200);

/// Enters the domain around the job's and starts the sentinel in it; returns in this process.
pub(super) fn post() -> Result<()> {
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
        0 => watch(supervisor),
        _ => Ok(()),
    }
}

/// The sentinel: no descriptor of the job's (the status socket's end of file tells the supervisor
/// the job has exec'd; the terminal's, that it hung up), a session of its own (no signal of the
/// job's terminal), then a wait for the supervisor's exit, and the rounds.
fn watch(supervisor: i32) -> ! {
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
    // SAFETY: getppid has no preconditions.
    let parent = || unsafe { libc::getppid() };
    match PidFd::open(supervisor, 0) {
        // Still the supervisor's child: the descriptor is of the supervisor, not of a process
        // given its pid later.
        Ok(pidfd) if parent() == supervisor => wait(&pidfd),
        Ok(_) => {}
        // The supervisor is gone, or no pidfd could be had: until this process is no longer the
        // supervisor's child (it is re-parented the moment the supervisor exits).
        Err(_) => {
            while parent() == supervisor {
                std::thread::sleep(PARENT_POLL);
            }
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

/// Until the process of `pidfd` has exited.
fn wait(pidfd: &PidFd) {
    loop {
        let mut fds = [PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(n) if n > 0 => return,
            Err(nix::errno::Errno::EINTR) | Ok(_) => continue,
            Err(_) => return,
        }
    }
}

/// SIGKILL to every process but this one; how many the kernel let it kill (the job's alone).
fn kill_round() -> usize {
    let Ok(proc) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let me = std::process::id() as i32;
    proc.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me && pid > 1)
        // SAFETY: kill takes two integers; the Landlock domain limits whom it reaches.
        .filter(|&pid| unsafe { libc::kill(pid, libc::SIGKILL) } == 0)
        .count()
}
