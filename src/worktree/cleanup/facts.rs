//! The facts the cleanup decision is taken on: whether the job still runs, its worktree directory,
//! its branch in the project, and who settles it. Data only: gathering them is gather.rs, deciding
//! on them decide.rs.

use crate::error::Result;
use crate::worktree::inspect::Inspection;
use crate::worktree::large_files::Outside;
use crate::worktree::standing::Standing;

/// Whether the job's processes still run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    Ended,
    Running,
    /// Its supervisor died without recording an end.
    Lost,
}

/// The job's worktree directory.
#[derive(Debug)]
pub enum Tree {
    /// There: the read of its repository, or why it could not be read.
    Present(Result<Box<Inspection>>),
    /// Gone, though isolate did not remove it.
    Missing,
    /// isolate removed it when the job ended: only the branch is left to settle.
    Removed,
}

/// The job's branch in the project, as the decision sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Branch {
    /// The import failed, or the branch could not be read: nothing is decided on it.
    Unknown(String),
    /// The job has commits the project does not have yet (a survey, which imports nothing).
    ToImport,
    /// The project has no such branch.
    Gone,
    /// At base: no commits of its own.
    AtBase,
    /// Commits beyond base, and where they stand against the project branch when that was asked
    /// for and there is one.
    Commits {
        count: usize,
        standing: Option<Standing>,
    },
}

impl Branch {
    /// Commits beyond base in the project (none when unknown or not yet imported).
    pub fn commits(&self) -> usize {
        match self {
            Branch::Commits { count, .. } => *count,
            _ => 0,
        }
    }
}

/// What is known about a worktree when its job ends, or when `rm`, `prune` or `worktrees` look.
#[derive(Debug)]
pub struct Facts {
    pub life: Life,
    /// Another live job has this worktree as its own.
    pub in_use: bool,
    pub tree: Tree,
    /// The project's branch (after the import, when one ran).
    pub branch: Branch,
    /// The import copied objects (it took time: the decision is taken again before deleting), so
    /// the branch's commits are new in the project and are not settled now.
    pub copied: bool,
    /// The project's base pin, which must point at the record's base while the worktree exists.
    pub pin: Option<String>,
    /// The project's branch after the import (the job's tip when it succeeded).
    pub branch_after: Option<String>,
    /// Other branches and tags of the job (and a detached HEAD) whose commits the project lacks.
    pub unimported: Vec<String>,
    /// What the job's repository holds outside git's object store (LFS and git-annex objects),
    /// after the import copied what it could: what the project lacks of it keeps the worktree.
    pub outside: Outside,
    /// A checkout of the project that holds the job's branch (checked out, being rebased or
    /// bisected), when the branch could otherwise go: it never goes from under a checkout.
    pub branch_held: Option<String>,
    pub settling: Settling,
}

/// Who settles the worktree, which decides how much of it may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settling {
    /// The job's end (`--keep`: the worktree stays), or an import (`import`, `merge`), which keeps.
    End { keep: bool },
    /// `rm`: a worktree that holds no work goes; the branch too when the project branch has all of
    /// it, else the branch stays and `rm` says so.
    Rm,
    /// `prune`: a worktree goes only when its branch holds nothing the project branch lacks; the
    /// branch goes with it.
    Prune,
}

impl Settling {
    /// A branch the project branch has all of goes.
    pub(super) fn settles_landed(self) -> bool {
        matches!(self, Settling::Rm | Settling::Prune)
    }
}
