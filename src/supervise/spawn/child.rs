//! What the child does between fork and exec of the pre-exec helper, in this order: its standard
//! streams, its directory, a clean signal mask, a session of its own, the job's terminal, the
//! parent-death signal, its cgroup (where the fork could not place it), the check that the
//! supervisor still lives, the two descriptors the helper keeps, then exec. Only async-signal-safe
//! calls on what the parent made before the fork: nothing here may allocate or take a lock, and it
//! never returns (a failure's errno goes to the parent on `errors`, then `_exit`).

use std::ffi::{c_char, CStr};
use std::os::fd::RawFd;

use crate::supervise::pty;

/// The descriptors, ids and strings the child's setup needs, all made before the fork.
pub(super) struct Setup<'a> {
    /// The helper's path, argv and environment, each list ending in a null pointer.
    pub program: &'a CStr,
    /// isolate itself, exec'd in its place when the helper beside it cannot be.
    pub fallback: Option<&'a CStr>,
    pub argv: &'a [*const c_char],
    pub envp: &'a [*const c_char],
    pub cwd: &'a CStr,
    /// stdin, stdout, stderr: the descriptor to put there, or `None` to leave the stream as is.
    pub stdio: [Option<RawFd>; 3],
    /// Interactive mode: the pty slave that becomes the controlling terminal and stdio.
    pub terminal: Option<RawFd>,
    /// The job's cgroup's `cgroup.procs`, open for writing, when the fork did not place the child.
    pub cgroup_procs: Option<RawFd>,
    /// The supervisor's pid: the child's parent, unless the supervisor died.
    pub parent: libc::pid_t,
    /// The status socket and the release pipe, which the helper keeps across its exec.
    pub keep: [RawFd; 2],
    /// The write end of the close-on-exec pipe the parent reads an errno from.
    pub errors: RawFd,
}

/// The child's side: set up, then exec the helper. Never returns.
///
/// # Safety
///
/// Only in the child of `sys::clone::fork_into`, with every pointer of `setup` valid (the parent's
/// memory, copied by the fork).
pub(super) unsafe fn exec_helper(setup: &Setup<'_>) -> ! {
    let errno = prepare(setup).err().unwrap_or(0);
    if errno == 0 {
        for program in std::iter::once(setup.program).chain(setup.fallback) {
            libc::execve(program.as_ptr(), setup.argv.as_ptr(), setup.envp.as_ptr());
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

/// Everything before exec; `Err(errno)` on the first step that failed.
unsafe fn prepare(setup: &Setup<'_>) -> Result<(), i32> {
    let check = |rc: libc::c_int| match rc {
        rc if rc < 0 => Err(*libc::__errno_location()),
        _ => Ok(()),
    };
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
    // The supervisor died before the death signal was armed: do not run unsupervised.
    if libc::getppid() != setup.parent {
        libc::_exit(125);
    }
    // The helper keeps the status and release descriptors; CMD's exec closes them again
    // (close_range).
    for fd in setup.keep {
        check(libc::fcntl(fd, libc::F_SETFD, 0))?;
    }
    Ok(())
}
