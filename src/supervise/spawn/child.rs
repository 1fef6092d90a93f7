//! What the child does between fork and entering the sandbox, in this order: the supervisor's
//! signal handlers back to their defaults (every signal blocked since before the fork, fork.rs),
//! its standard streams, its directory, a clean signal mask, a session of its own, the job's
//! terminal, the parent-death signal, its cgroup (where the fork could not place it), the check
//! that the supervisor still lives, the two descriptors it keeps, then either exec of the pre-exec
//! helper or, when the supervisor forked with no other thread, the sandbox entered right here
//! (`sandbox::exec::enter`). Up to that point only async-signal-safe calls on what the parent made
//! before the fork: nothing may allocate or take a lock, and it never returns (a failure's errno
//! goes to the parent on `errors`, then `_exit`). Entered here, the child is a copy of a process
//! whose only thread is the one that forked, so no lock can be held by a thread that is not there:
//! it may allocate, and it ends in exec of CMD or `_exit`, never unwinding into the parent's
//! frames it was copied with.

use std::ffi::{c_char, CStr};
use std::os::fd::RawFd;

use crate::sandbox::exec::SETUP_FAILED;
use crate::supervise::pty;

/// How the child enters the sandbox once set up.
pub(super) enum Entry<'a> {
    /// Exec of the pre-exec helper.
    Helper {
        /// The helper's path, argv and environment, each list ending in a null pointer.
        program: &'a CStr,
        /// isolate itself, exec'd in its place when the helper beside it cannot be.
        fallback: Option<&'a CStr>,
        argv: &'a [*const c_char],
        envp: &'a [*const c_char],
    },
    /// Right here: the supervisor had no other thread at the fork.
    Within {
        /// Restricts the child and execs CMD; returns only if it panicked.
        enter: &'a dyn Fn(),
        /// The parent's ends of the status socket and the release pipe, which the helper's exec
        /// would have closed.
        close: [RawFd; 2],
    },
}

/// The descriptors, ids and strings the child's setup needs, all made before the fork.
pub(super) struct Setup<'a> {
    pub entry: Entry<'a>,
    pub cwd: &'a CStr,
    /// stdin, stdout, stderr: the descriptor to put there, or `None` to leave the stream as is.
    pub stdio: [Option<RawFd>; 3],
    /// Interactive mode: the pty slave that becomes the controlling terminal and stdio.
    pub terminal: Option<RawFd>,
    /// The job's cgroup's `cgroup.procs`, open for writing, when the fork did not place the child.
    pub cgroup_procs: Option<RawFd>,
    /// The `cgroup.procs` of its cgroups in v1 hierarchies (its limits), open for writing.
    pub limit_procs: &'a [RawFd],
    /// The supervisor's pid: the child's parent, unless the supervisor died.
    pub parent: libc::pid_t,
    /// The status socket, the release pipe and the namespaces' descriptors, which the helper
    /// keeps across its exec.
    pub keep: &'a [RawFd],
    /// The write end of the close-on-exec pipe the parent reads an errno from.
    pub errors: RawFd,
}

/// The child's side: set up, then enter the sandbox. Never returns.
///
/// # Safety
///
/// Only in the child of `sys::clone::fork_into`, with every pointer of `setup` valid (the parent's
/// memory, copied by the fork), and `Entry::Within` only when the parent had no other thread.
pub(super) unsafe fn start(setup: &Setup<'_>) -> ! {
    let errno = prepare(setup).err().unwrap_or(0);
    if errno == 0 {
        match &setup.entry {
            Entry::Helper {
                program,
                fallback,
                argv,
                envp,
            } => {
                for program in std::iter::once(program).chain(fallback) {
                    libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr());
                }
            }
            Entry::Within { enter, close } => within(setup, *enter, *close),
        }
    }
    let errno = match errno {
        0 => *libc::__errno_location(),
        e => e,
    };
    let bytes = errno.to_ne_bytes();
    libc::write(setup.errors, bytes.as_ptr().cast(), bytes.len());
    libc::_exit(125)
}

/// The sandbox entered in this process: what the helper's exec would have done first (the parent's
/// descriptors closed; its signal handlers are reset in `prepare`), the parent told the child runs
/// (the end of `errors`, as at an exec), then `enter`.
unsafe fn within(setup: &Setup<'_>, enter: &dyn Fn(), close: [RawFd; 2]) -> ! {
    for fd in close {
        libc::close(fd);
    }
    libc::close(setup.errors);
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(enter)).is_err() {
        let code = [SETUP_FAILED];
        let why = b"the sandbox's setup failed unexpectedly";
        libc::write(setup.keep[0], code.as_ptr().cast(), 1);
        libc::write(setup.keep[0], why.as_ptr().cast(), why.len());
    }
    libc::_exit(125)
}

/// Every signal the parent handles back to its default, as exec would reset it (before the helper's
/// exec too, so that nothing reaches a copied handler meanwhile); ignored ones stay ignored, as
/// across exec.
unsafe fn default_handlers() {
    for sig in 1..=libc::SIGRTMAX() {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction != libc::SIG_DFL
            && old.sa_sigaction != libc::SIG_IGN
        {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}

/// Everything before exec; `Err(errno)` on the first step that failed.
unsafe fn prepare(setup: &Setup<'_>) -> Result<(), i32> {
    let check = |rc: libc::c_int| match rc {
        rc if rc < 0 => Err(*libc::__errno_location()),
        _ => Ok(()),
    };
    // While every signal is still blocked (fork.rs): none may run a copy of the supervisor's
    // handlers, and one sent meanwhile is taken as by a fresh process once unblocked below.
    default_handlers();
    for (target, fd) in setup.stdio.iter().enumerate() {
        let Some(fd) = *fd else { continue };
        let target = target as RawFd;
        if fd == target {
            // dup2(fd, fd) would leave close-on-exec set on the very descriptor wanted.
            check(libc::fcntl(fd, libc::F_SETFD, 0))?;
            continue;
        }
        while libc::dup2(fd, target) < 0 {
            let e = *libc::__errno_location();
            if e != libc::EINTR {
                return Err(e);
            }
        }
    }
    check(libc::chdir(setup.cwd.as_ptr()))?;
    // As std's spawn does: no signal blocked, SIGPIPE back to its default (Rust ignores it).
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    check(libc::pthread_sigmask(
        libc::SIG_SETMASK,
        &empty,
        std::ptr::null_mut(),
    ))?;
    if libc::signal(libc::SIGPIPE, libc::SIG_DFL) == libc::SIG_ERR {
        return Err(*libc::__errno_location());
    }
    check(libc::setsid())?;
    if let Some(slave) = setup.terminal {
        pty::attach_controlling_terminal(slave).map_err(|e| e.raw_os_error().unwrap_or(0))?;
    }
    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
    // Into the job's cgroup before anything can fork; a failure leaves the descendant walk.
    if let Some(fd) = setup.cgroup_procs {
        libc::write(fd, b"0".as_ptr().cast(), 1);
    }
    // Into the cgroups of its limits too; one it could not enter the supervisor finds (the run
    // then fails: never silently unlimited).
    for &fd in setup.limit_procs {
        libc::write(fd, b"0".as_ptr().cast(), 1);
    }
    // The supervisor died before the death signal was armed: do not run unsupervised.
    if libc::getppid() != setup.parent {
        libc::_exit(125);
    }
    // The helper keeps the status and release descriptors; CMD's exec closes them again
    // (close_range).
    for &fd in setup.keep {
        check(libc::fcntl(fd, libc::F_SETFD, 0))?;
    }
    Ok(())
}
