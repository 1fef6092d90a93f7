//! A job started inside another job (docs/cli.md, "Nested jobs"): isolate run by a process of an
//! outer job, which the outer job's sandbox already holds. Everything the inner isolate does is
//! bounded by the outer sandbox, so what this module reads (the outer job's variables, which the
//! outer job can change) only decides how the inner job narrows it further, never what the outer
//! job may do.
//!
//! Two things differ one level down. The kernel allows one seccomp listener in a process's filter
//! chain (`EBUSY`), and the outer job's supervisor holds it: an inner job's filter hands nothing
//! over, and the outer job's broker keeps judging every connect under the outer policy
//! (sandbox/seccomp/). And the user's state directory is out of the outer job's reach: the inner
//! job's state lives in the outer job's writable area, inside its repository's git directory
//! (`.git/isolate`), where the outer job's end finds it.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::job::id::JobId;

/// The directory of a job's git directory where the jobs started inside it keep their state.
pub const STATE_IN_GIT_DIR: &str = "isolate";

/// The outer job this process runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outer {
    pub id: JobId,
    /// The outer job's worktree, for a `--worktree` job.
    pub worktree: Option<PathBuf>,
    /// The outer job's TMPDIR.
    pub tmpdir: Option<PathBuf>,
}

impl Outer {
    /// Where jobs started inside the outer job keep their state: its repository's git directory
    /// (`.git/isolate`), else its TMPDIR (which ends with it).
    pub fn state_dir(&self) -> Option<PathBuf> {
        match (&self.worktree, &self.tmpdir) {
            (Some(worktree), _) => Some(worktree.join(".git").join(STATE_IN_GIT_DIR)),
            (None, Some(tmpdir)) => Some(tmpdir.join("isolate-state")),
            (None, None) => None,
        }
    }
}

/// The outer job, when this process runs inside one: the variables isolate gives every job, and
/// a seccomp filter over this process whose listener some supervisor holds (a job's processes
/// cannot leave theirs). Both, so that a stray `ISOLATE_JOB` elsewhere (a container's filter has
/// no listener) never makes isolate leave its connects to a judge that is not there.
pub fn outer() -> Option<&'static Outer> {
    static OUTER: OnceLock<Option<Outer>> = OnceLock::new();
    OUTER.get_or_init(detect).as_ref()
}

fn detect() -> Option<Outer> {
    let id = JobId::parse(&std::env::var("ISOLATE_JOB").ok()?)?;
    if !filtered() || !crate::sys::listener::held() {
        return None;
    }
    let absolute =
        |var: &str| crate::sys::dirs::from_env(var).filter(|p| p.is_absolute() && p.is_dir());
    Some(Outer {
        id,
        worktree: absolute("ISOLATE_WORKTREE"),
        tmpdir: absolute("TMPDIR"),
    })
}

/// This process runs under a seccomp filter (`Seccomp: 2` in its status).
fn filtered() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .any(|l| l.strip_prefix("Seccomp:").is_some_and(|v| v.trim() == "2"))
    })
}
