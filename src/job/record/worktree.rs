//! The worktree part of a record: where the job's worktree is, what it holds, and its outcome.

use serde::{Deserialize, Serialize};

/// Uncommitted work in a worktree, by kind of file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dirty {
    /// Tracked files changed (or staged).
    pub modified: usize,
    /// Files git does not track and does not ignore.
    pub untracked: usize,
    /// Files with merge conflicts.
    pub conflicted: usize,
}

/// A job's worktree as its record tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeReport {
    /// The worktree's directory.
    pub path: String,
    /// Its branch, `isolate/<id>`.
    pub branch: String,
    /// The commit it was cut from (full id).
    pub base: String,
    /// The project's top level.
    pub repo: String,
    /// Commits on the project's branch beyond base.
    pub commits: usize,
    /// Uncommitted work left in it.
    pub dirty: Dirty,
    /// Stash entries in the job's repository (they keep the worktree).
    #[serde(default)]
    pub stash: usize,
    /// Other branches and tags of the job holding commits the project lacks (they keep the worktree).
    #[serde(default)]
    pub other_refs: Vec<String>,
    /// A merge, rebase, cherry-pick, revert or bisect left in progress.
    #[serde(default)]
    pub in_progress: Vec<String>,
    /// Ignored files (build output) that went with a removed worktree.
    #[serde(default)]
    pub ignored: usize,
    /// The project's checkout had uncommitted changes when the job started (they are not in the worktree).
    #[serde(default)]
    pub dispatch_dirty: bool,
    /// The worktree was removed when the job ended (it held nothing that is not in the project).
    pub removed: bool,
    /// The branch `isolate/<id>` is kept in the project.
    pub branch_kept: bool,
    /// Why the worktree and branch are where they are (`kept: 1 untracked`, `clean; branch deleted:
    /// no commits`).
    pub reason: String,
    /// The command that goes on with the work, when there is work to go on with.
    pub handoff: Option<String>,
    /// Where isolate last left the project's branch (base, or the tip it imported), so that a
    /// later import can tell whether someone else moved it.
    #[serde(default)]
    pub branch_tip: Option<String>,
    /// The project's branch the job was started from (`merge` and `sync` bring it in).
    #[serde(default)]
    pub project_branch: Option<String>,
    /// The pull or merge request the worktree was cut from (`--pr`), by number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<u64>,
    /// Where a fetched base came from: the remote and its ref (`origin refs/pull/7/head`, `origin
    /// refs/heads/main` for `--base fresh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_from: Option<String>,
    /// The jobs started inside this one (`isolate run --worktree` in its worktree), by id, as its
    /// repository held them when it was last looked at.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nested_jobs: Vec<String>,
    /// What the job's repository holds outside git's object store that the project lacks (LFS
    /// objects only in its store or in none, git-annex objects only in its annex), each kind in
    /// words: it keeps the worktree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside_git: Vec<String>,
    /// LFS objects of the job's store the last look copied into the project's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lfs_imported: usize,
    /// `--push REMOTE`: the job's branch pushed there from the project once imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push: Option<Push>,
}

/// What `--push` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Push {
    /// The remote, as given.
    pub remote: String,
    /// The branch reached the remote.
    pub pushed: bool,
    /// Why not, in git's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}
