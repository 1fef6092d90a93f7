//! One mark of a managed worktree, as `worktrees` prints it and its JSON holds it. Data only.

use std::fmt;

use serde::{Serialize, Serializer};

/// One mark of a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    Running,
    Lost,
    /// `rm --force` forgot the job and left its worktree on disk.
    Forgotten,
    /// Modified, untracked and conflicted files and stash entries.
    Dirty(usize),
    /// Other branches or tags (or a detached HEAD) with commits the project does not have.
    OtherRefs(usize),
    InProgress(&'static str),
    /// Kinds of LFS or git-annex content the project lacks.
    OutsideGit(usize),
    /// The job has commits the project has not imported yet.
    ToImport,
    /// The project has no branch for the job.
    NoBranch,
    NoCommits,
    Merged,
    Ahead(usize),
    Behind(usize),
    Missing,
    Clean,
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mark::Running => f.write_str("running"),
            Mark::Lost => f.write_str("lost"),
            Mark::Forgotten => f.write_str("forgotten"),
            Mark::Dirty(n) => write!(f, "dirty ({n})"),
            Mark::OtherRefs(n) => write!(f, "other refs ({n})"),
            Mark::InProgress(op) => write!(f, "{op} in progress"),
            Mark::OutsideGit(n) => write!(f, "outside git ({n})"),
            Mark::ToImport => f.write_str("to import"),
            Mark::NoBranch => f.write_str("no branch"),
            Mark::NoCommits => f.write_str("no commits"),
            Mark::Merged => f.write_str("merged"),
            Mark::Ahead(n) => write!(f, "ahead {n}"),
            Mark::Behind(n) => write!(f, "behind {n}"),
            Mark::Missing => f.write_str("missing"),
            Mark::Clean => f.write_str("clean"),
        }
    }
}

impl Serialize for Mark {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}
