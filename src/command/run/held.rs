//! What a running job holds of the machine, each undone when dropped: its block of ports (released
//! for the next job) and its cgroup (removed once empty). No path of `run` releases them by hand.

use std::path::Path;

use crate::error::Result;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::ports::{self, PortBlock};

/// The job's block of TCP ports (`ISOLATE_PORT`).
pub(super) struct Ports(Option<PortBlock>);

impl Ports {
    pub(super) fn reserve(state: &Path, id: &str) -> Result<Ports> {
        ports::reserve(state, id).map(|block| Ports(Some(block)))
    }

    /// The first port of the block.
    pub(super) fn first(&self) -> u16 {
        self.0.as_ref().map_or(0, |block| block.first)
    }
}

impl Drop for Ports {
    fn drop(&mut self) {
        if let Some(block) = self.0.take() {
            block.release();
        }
    }
}

/// The job's leaf cgroup, when one could be made.
pub(super) struct JobCgroup(Option<Cgroup>);

impl JobCgroup {
    pub(super) fn create(id: &str) -> JobCgroup {
        JobCgroup(Cgroup::create(id))
    }

    pub(super) fn get(&self) -> Option<&Cgroup> {
        self.0.as_ref()
    }

    /// Keeps the cgroup only when `pid` (the job's main process) is in it: `placed` there by the
    /// fork, or moved in by itself before exec; if it could not, the walk of the process tree
    /// stops the job instead.
    pub(super) fn holding(self, pid: nix::unistd::Pid, placed: bool) -> JobCgroup {
        match self.0.as_ref().is_some_and(|cg| placed || cg.contains(pid)) {
            true => self,
            false => JobCgroup(None),
        }
    }

    /// Its path, for the record.
    pub(super) fn path(&self) -> Option<String> {
        self.get().map(|cg| cg.path().display().to_string())
    }
}

impl Drop for JobCgroup {
    fn drop(&mut self) {
        if let Some(cg) = &self.0 {
            cg.remove();
        }
    }
}

/// A short name for the job's TMPDIR: a link `/tmp/isolate-<uid>.<id>` to it, which the job is
/// given as its `TMPDIR`. The real one lies deep in the state directory, and a unix socket's
/// path holds at most 107 bytes: Chromium's singleton socket, ssh's control path, gpg's sockets
/// under it went past that. isolate makes the link itself (never over anything there: another
/// user's name in /tmp only makes the job keep the long one) and removes it with the job; the
/// job may not write /tmp, so it cannot replace it.
pub(super) struct ShortTmp(Option<std::path::PathBuf>);

impl ShortTmp {
    pub(super) fn make(tmpdir: &Path, id: &str) -> ShortTmp {
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let link = std::path::PathBuf::from(format!("/tmp/isolate-{uid}.{id}"));
        match std::os::unix::fs::symlink(tmpdir, &link) {
            Ok(()) => ShortTmp(Some(link)),
            Err(_) => ShortTmp(None),
        }
    }

    /// The TMPDIR the job is given: the link, else the directory itself.
    pub(super) fn or<'a>(&'a self, tmpdir: &'a Path) -> &'a Path {
        self.0.as_deref().unwrap_or(tmpdir)
    }
}

impl Drop for ShortTmp {
    fn drop(&mut self) {
        if let Some(link) = self.0.take() {
            // Only the link isolate made: a link still, to where it was made to point.
            if std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
                let _ = std::fs::remove_file(&link);
            }
        }
    }
}
