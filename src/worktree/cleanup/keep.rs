//! Why a worktree stays, in the words every ending prints. Never decides: decide.rs does.

use super::validate::Mismatch;
use super::work::Work;

/// Why a worktree stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    Running,
    Lost,
    InUse,
    Unreadable(String),
    /// Ignore rules the job wrote where nobody reviews them: where, and what to do about it.
    Untrusted(String),
    ImportFailed(String),
    Work(Work),
    /// `--keep`.
    Asked,
    /// The record's claims do not match the disk.
    Mismatch(Mismatch),
    /// The second look, right before deleting, differed from the first.
    Changed,
    /// `prune`: the branch holds commits the project branch lacks.
    Unmerged(Unmerged),
    /// `prune`: a checkout of the project holds the branch.
    BranchHeld(String),
}

/// Why a branch is not known to be in the project branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmerged {
    /// This many commits whose change the project branch does not have.
    Commits(usize),
    /// Commits the project has not imported yet.
    ToImport,
    /// Imported just now: settled by the next look.
    JustImported,
    /// The job started on a detached HEAD, or its project branch is gone: nothing to compare with.
    NoProjectBranch,
}

impl std::fmt::Display for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Keep::Running => f.write_str("running"),
            Keep::Lost => f.write_str("lost: its supervisor died; the worktree is kept untouched"),
            Keep::InUse => f.write_str("in use by another job"),
            Keep::Unreadable(why) => write!(f, "cannot read the job's repository ({why})"),
            Keep::Untrusted(why) => f.write_str(why),
            Keep::ImportFailed(why) => write!(f, "import failed ({why})"),
            Keep::Work(work) => write!(f, "{work}"),
            Keep::Asked => f.write_str("--keep"),
            Keep::Mismatch(why) => {
                write!(f, "record does not match the disk: {why}; nothing deleted")
            }
            Keep::Changed => f.write_str("the worktree changed while isolate was deciding"),
            Keep::Unmerged(Unmerged::Commits(n)) => {
                write!(f, "{n} commit{} not in the project branch", plural(*n))
            }
            Keep::Unmerged(Unmerged::ToImport) => f.write_str("commits not imported yet"),
            Keep::Unmerged(Unmerged::JustImported) => f.write_str("commits imported just now"),
            Keep::BranchHeld(held) => write!(f, "its branch is {held}"),
            Keep::Unmerged(Unmerged::NoProjectBranch) => {
                f.write_str("commits, and no project branch to compare them with")
            }
        }
    }
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
