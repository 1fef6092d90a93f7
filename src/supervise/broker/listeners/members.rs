//! The processes of a job and whether one of them holds a socket: each process held by a pidfd
//! while its descriptors are read, so that a reused pid never vouches for a socket.

use std::collections::HashSet;
use std::os::fd::{AsFd, AsRawFd};

use nix::unistd::Pid;

use crate::supervise::cgroup::Cgroup;
use crate::supervise::tree;
use crate::sys::pidfd::PidFd;

/// The processes of a job: its cgroup's, where it has one, else the descendants of the supervisor.
#[derive(Debug, Clone)]
pub struct Members {
    /// The supervisor: a child subreaper, so every process of the job stays its descendant.
    pub root: Pid,
    /// The job's own cgroup v2 directory.
    pub cgroup: Option<std::path::PathBuf>,
}

impl Members {
    fn pids(&self) -> Vec<Pid> {
        match &self.cgroup {
            // A cgroup that is gone has no processes left.
            Some(dir) => Cgroup::open(dir).map(|cg| cg.pids()).unwrap_or_default(),
            None => tree::descendants(self.root),
        }
    }

    /// `pid` is (still) a process of the job.
    pub(crate) fn contains(&self, pid: Pid) -> bool {
        self.pids().contains(&pid)
    }
}

/// Whether a process of the job holds the socket whose inode is `socket`. Each process is held by
/// a pidfd while its descriptors are read, and counted only if it is a member after the pidfd was
/// opened and alive after its descriptors were read: a pid that ended and was reused by another
/// process meanwhile never vouches for a socket.
pub fn held_by_job(socket: u32, job: &Members) -> bool {
    let wanted = format!("socket:[{socket}]");
    let mut seen = HashSet::new();
    job.pids().into_iter().any(|pid| {
        if !seen.insert(pid) {
            return false;
        }
        let Ok(pidfd) = PidFd::open(pid.as_raw(), 0) else {
            return false;
        };
        if !job.contains(pid) {
            return false;
        }
        let holds = std::fs::read_dir(crate::sys::proc_view::dir(pid.as_raw()).join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|entry| {
                std::fs::read_link(entry.path())
                    .is_ok_and(|target| target.as_os_str() == wanted.as_str())
            });
        // SAFETY: pidfd_send_signal with signal 0 only checks that the process still exists.
        let alive = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                pidfd.as_fd().as_raw_fd(),
                0,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        } == 0;
        holds && alive
    })
}
