//! One job's worktree as the record names it, the input of every look at it; and whether a look
//! imports. Never read from the worktree: everything here is the record's or computed by isolate.

use std::path::Path;

use super::facts::{Life, Settling};
use crate::git::project::Project;
use crate::job::id::JobId;

/// One job's worktree as the record names it.
pub struct Job<'a> {
    pub project: &'a Project,
    pub id: &'a JobId,
    /// `<worktree_root>/<project key>`: the only directory its worktree may sit in.
    pub key_dir: &'a Path,
    pub path: &'a Path,
    pub base: &'a str,
    /// The job's record directory: it holds `branch-tip`, where isolate last left the project's
    /// branch, and the lock that serialises imports of this job.
    pub job_dir: &'a Path,
    pub life: Life,
    /// The record says isolate removed the worktree when the job ended.
    pub removed: bool,
    pub settling: Settling,
    pub dispatch_dirty: bool,
    /// The project's branch the job was started from.
    pub project_branch: Option<&'a str>,
    /// The pull request the worktree was cut from, and where its base was fetched from.
    pub pull_request: Option<u64>,
    pub started_from: Option<&'a str>,
    /// The job's policy (what loads it again), named in the handoff of a kept worktree.
    pub policy: Option<&'a str>,
}

/// Whether a look at the worktree imports its commits first (every ending), or only reads
/// (`worktrees`, `prune --dry-run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Look {
    Import,
    Survey,
}
