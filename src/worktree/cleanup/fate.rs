//! What becomes of the job's branch when its worktree goes, and why, in the words every ending
//! prints ("branch kept: 2 commits not in main"). Read off the facts; never touches a ref.

use std::fmt;

use super::facts::{Branch, Facts};
use super::job::Job;
use super::keep::plural;
use super::outcome::BranchAction;

/// The branch's fate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// The project has no branch for the job: nothing to say.
    NoBranch,
    Deleted(Deleted),
    Kept(BranchKept),
}

/// Why the branch goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deleted {
    NoCommits,
    /// The project branch (named) has its commits.
    Landed(String),
}

/// Why the branch stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchKept {
    /// A checkout of the project holds it (how, and where).
    Held(String),
    NoCommits,
    ToImport,
    /// The import failed, or the branch could not be read.
    Unknown(String),
    /// This many commits the project branch (named) does not have.
    Unmerged {
        count: usize,
        target: String,
    },
    JustImported,
    /// This many commits beyond base.
    BeyondBase(usize),
}

impl Fate {
    /// What happens to the branch, as `prune` and `rm` say it; `None` without a branch.
    pub fn action(&self) -> Option<BranchAction> {
        match self {
            Fate::NoBranch => None,
            Fate::Deleted(_) => Some(BranchAction::Delete),
            Fate::Kept(_) => Some(BranchAction::Keep),
        }
    }
}

/// What becomes of the job's branch when `delete_branch` is the decision on it.
pub fn branch_fate(job: &Job, facts: &Facts, delete_branch: bool) -> Fate {
    let target = || {
        job.project_branch
            .unwrap_or("the project branch")
            .to_string()
    };
    match (&facts.branch, delete_branch) {
        (Branch::Gone, _) => Fate::NoBranch,
        (_, false) if facts.branch_held.is_some() => Fate::Kept(BranchKept::Held(
            facts.branch_held.clone().unwrap_or_default(),
        )),
        (Branch::AtBase, true) => Fate::Deleted(Deleted::NoCommits),
        (_, true) => Fate::Deleted(Deleted::Landed(target())),
        (Branch::AtBase, false) => Fate::Kept(BranchKept::NoCommits),
        (Branch::ToImport, false) => Fate::Kept(BranchKept::ToImport),
        (Branch::Unknown(why), false) => Fate::Kept(BranchKept::Unknown(why.clone())),
        (
            Branch::Commits {
                standing: Some(standing),
                ..
            },
            false,
        ) if !standing.landed() => Fate::Kept(BranchKept::Unmerged {
            count: standing.unmerged,
            target: target(),
        }),
        (Branch::Commits { .. }, false) if facts.copied => Fate::Kept(BranchKept::JustImported),
        (Branch::Commits { count, .. }, false) => Fate::Kept(BranchKept::BeyondBase(*count)),
    }
}

/// "branch deleted: no commits", "branch kept: 2 commits not in main"; nothing without a branch.
impl fmt::Display for Fate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fate::NoBranch => Ok(()),
            Fate::Deleted(Deleted::NoCommits) => f.write_str("branch deleted: no commits"),
            Fate::Deleted(Deleted::Landed(target)) => {
                write!(f, "branch deleted: its commits are in {target}")
            }
            Fate::Kept(kept) => write!(f, "branch kept: {kept}"),
        }
    }
}

impl fmt::Display for BranchKept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BranchKept::Held(held) => f.write_str(held),
            BranchKept::NoCommits => f.write_str("no commits"),
            BranchKept::ToImport => f.write_str("commits to import"),
            BranchKept::Unknown(why) => f.write_str(why),
            BranchKept::Unmerged { count, target } => {
                write!(f, "{count} commit{} not in {target}", plural(*count))
            }
            BranchKept::JustImported => f.write_str("its commits were imported just now"),
            BranchKept::BeyondBase(count) => {
                write!(f, "{count} commit{} beyond base", plural(*count))
            }
        }
    }
}
