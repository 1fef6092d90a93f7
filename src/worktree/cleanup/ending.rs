//! What settling left of a job's worktree and its branch: the one value the record's words and
//! flags (`reason`, `removed`, `branch_kept` of the job's report) are read from. Data and words
//! only: carrying the verdict out is settle.rs, the report report.rs.

use std::fmt;

use super::facts::{Branch, Facts};
use super::fate::Fate;
use super::keep::Keep;

/// How the worktree and its branch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The worktree stays as it is, and the project's branch of the job (if any) with it.
    Kept(Stay),
    /// The worktree is gone, and what became of the branch.
    Gone { tree: Gone, fate: Fate },
}

/// Why the worktree stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stay {
    /// The verdict keeps it.
    Verdict(Keep),
    /// The verdict removed it, but the removal failed (why).
    Unremovable(String),
}

/// How the worktree went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// Removed now: it held nothing.
    Clean,
    /// Its directory was missing, though isolate had not removed it.
    Missing,
    /// isolate removed it when the job ended.
    Removed,
}

impl Ending {
    /// The worktree is gone (the report's `removed`).
    pub fn removed(&self) -> bool {
        matches!(self, Ending::Gone { .. })
    }

    /// The project still has the job's branch (the report's `branch_kept`).
    pub fn branch_kept(&self, facts: &Facts) -> bool {
        match self {
            Ending::Kept(_) => !matches!(facts.branch, Branch::Gone),
            Ending::Gone { fate, .. } => matches!(fate, Fate::Kept(_)),
        }
    }
}

/// "kept: 3 modified", "clean; branch deleted: no commits" (the report's `reason`, but for the
/// "already in" the report adds).
impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Kept(stay) => write!(f, "{stay}"),
            Ending::Gone {
                tree,
                fate: Fate::NoBranch,
            } => write!(f, "{tree}"),
            Ending::Gone { tree, fate } => write!(f, "{tree}; {fate}"),
        }
    }
}

impl fmt::Display for Stay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stay::Verdict(keep) => write!(f, "kept: {keep}"),
            Stay::Unremovable(why) => write!(f, "kept: cannot remove the worktree: {why}"),
        }
    }
}

impl fmt::Display for Gone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Gone::Clean => "clean",
            Gone::Missing => "worktree directory is missing",
            Gone::Removed => "worktree removed",
        })
    }
}
