//! Job control on the job's own terminal. In interactive mode the pre-exec helper, session leader
//! of the pty's session, forks: CMD runs in a process group of its own, the terminal's foreground
//! group, and the helper stays as its monitor (as sudo's monitor does). Without it, CMD's group
//! would be orphaned (its parent, the supervisor, is in another session) and the kernel would
//! discard the SIGTSTP of Ctrl-Z. The monitor mirrors CMD: it stops when CMD stops (so the
//! supervisor sees its main process stop), continues CMD when continued, forwards the termination
//! signals, and ends as CMD ended (same code, or the same signal).

use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::signal::{kill, signal, SigHandler, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, getpid, setpgid, ForkResult, Pid};

use crate::error::Result;
use crate::sandbox::step_failed;

/// CMD's pid, for the forwarding handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

extern "C" fn forward(sig: libc::c_int) {
    let child = CHILD.load(Ordering::Relaxed);
    if child > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(-child, sig) };
    }
}

/// Forks. Returns in the child, which is then in its own process group in the foreground of the
/// terminal on descriptor 0 and about to exec CMD; the parent becomes the monitor and never returns.
/// The monitor closes every descriptor above 2, the status socket among them, so only CMD's exec
/// closes the last copy of that.
pub fn split() -> Result<()> {
    // SAFETY: the helper is single-threaded.
    match unsafe { fork() }.map_err(step_failed("cannot fork the job's monitor"))? {
        ForkResult::Child => {
            let _ = setpgid(Pid::from_raw(0), Pid::from_raw(0));
            // A background group may not take the terminal unless SIGTTOU is ignored meanwhile.
            // SAFETY: plain signal dispositions of this process.
            unsafe {
                let _ = signal(Signal::SIGTTOU, SigHandler::SigIgn);
                take_terminal(getpid());
                let _ = signal(Signal::SIGTTOU, SigHandler::SigDfl);
            }
            Ok(())
        }
        ForkResult::Parent { child } => {
            // Every descriptor above the streams closed, not only marked close-on-exec: the monitor
            // never execs, and CMD, in the same sandbox, may trace it and use what it holds (a
            // writable descriptor of a project file that isolate's caller left open). The status
            // socket is among them, so only CMD's exec closes its last copy.
            // SAFETY: close_range only closes this process's descriptors; none is used here after.
            unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
            monitor(child)
        }
    }
}

fn monitor(child: Pid) -> ! {
    CHILD.store(child.as_raw(), Ordering::Relaxed);
    // SAFETY: installing a handler that only calls kill(2).
    unsafe {
        for sig in FORWARDED {
            let _ = signal(sig, SigHandler::Handler(forward));
        }
        let _ = signal(Signal::SIGTTOU, SigHandler::SigIgn);
    }
    loop {
        match waitpid(child, Some(WaitPidFlag::WUNTRACED)) {
            Ok(WaitStatus::Stopped(..)) => {
                // Stop too: the supervisor sees its main process stop and suspends itself.
                let _ = kill(getpid(), Signal::SIGSTOP);
                // Continued (`fg`): CMD takes the terminal back and goes on.
                take_terminal(child);
                let _ = kill(Pid::from_raw(-child.as_raw()), Signal::SIGCONT);
            }
            Ok(WaitStatus::Exited(_, code)) => exit(code),
            Ok(WaitStatus::Signaled(_, sig, _)) => die_like(sig),
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => exit(125),
        }
    }
}

/// Ends the monitor by the signal that ended CMD, so the supervisor records the same end.
fn die_like(sig: Signal) -> ! {
    // SAFETY: restoring the default disposition, then raising the signal at this process.
    unsafe {
        let _ = signal(sig, SigHandler::SigDfl);
    }
    let _ = kill(getpid(), sig);
    exit(128 + sig as i32)
}

/// Ends the monitor at once, running nothing of the process it was forked from. It is always the
/// pre-exec helper, never a copy of the supervisor (supervise/spawn/starting.rs): it lives in the
/// job's sandbox, where the job may read its memory.
fn exit(code: i32) -> ! {
    // SAFETY: _exit has no preconditions.
    unsafe { libc::_exit(code) }
}

/// Makes `group` the foreground process group of the terminal on descriptor 0.
fn take_terminal(group: Pid) {
    // SAFETY: tcsetpgrp only changes the terminal's foreground group.
    unsafe { libc::tcsetpgrp(0, group.as_raw()) };
}
