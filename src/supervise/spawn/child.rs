//! What the child does between fork and exec of the pre-exec helper, in this order: a session of
//! its own, the job's terminal, the parent-death signal, its cgroup, the check that the supervisor
//! still lives, and the two descriptors the helper keeps. Only async-signal-safe calls: nothing
//! here may allocate or take a lock.

use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::supervise::pty;

/// The descriptors and ids the child's setup needs, all taken before the fork.
pub(super) struct Setup {
    /// Interactive mode: the pty slave that becomes the controlling terminal and stdio.
    pub terminal: Option<RawFd>,
    /// The job's cgroup's `cgroup.procs`, open for writing.
    pub cgroup_procs: Option<RawFd>,
    /// The supervisor's pid: the child's parent, unless the supervisor died.
    pub parent: libc::pid_t,
    /// The status socket and the release pipe, which the helper keeps across its exec.
    pub keep: [RawFd; 2],
}

/// Makes `cmd` run `setup` in the child between fork and exec.
pub(super) fn install(cmd: &mut Command, setup: Setup) {
    let Setup {
        terminal,
        cgroup_procs,
        parent,
        keep,
    } = setup;
    // SAFETY: only async-signal-safe calls (setsid, ioctl, dup2, prctl, write, getppid, fcntl)
    // between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(slave) = terminal {
                pty::attach_controlling_terminal(slave)?;
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Into the job's cgroup before anything can fork; a failure leaves the descendant walk.
            if let Some(fd) = cgroup_procs {
                libc::write(fd, b"0".as_ptr().cast(), 1);
            }
            // The supervisor died before the death signal was armed: do not run unsupervised.
            if libc::getppid() != parent {
                libc::_exit(125);
            }
            // The helper keeps the status and release descriptors; CMD's exec closes them again
            // (close_range).
            for fd in keep {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}
