//! What a merge would bring (shown before asking) and how it ended. Data only: never reads git.

use std::path::PathBuf;

/// One file the merge changes on the project branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// git's status letter: `A`dded, `M`odified, `D`eleted, `T`ype changed.
    pub status: char,
    /// The path, for showing (not UTF-8 where git's is not: see `name`).
    pub path: String,
    /// The path as git names it, byte for byte: what pathspecs and the checkout are given.
    pub name: Vec<u8>,
    /// What it was and what it becomes (`Kind::Absent` for an addition or a deletion).
    pub before: Kind,
    pub after: Kind,
    /// Where `after` is a link, the path it points to (`None` for a target over 4 KiB, which no
    /// checkout makes).
    pub target: Option<String>,
    /// The object `after` is (a blob, or a submodule's commit), hex.
    pub object: String,
}

/// What a path of a tree is, from its git mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Absent,
    File,
    Executable,
    /// A symbolic link: its content is the path it points to.
    Link,
    /// A submodule: a commit of another repository.
    Submodule,
    /// A mode git does not write into a tree.
    Other(u32),
}

impl Kind {
    /// The kind of git's octal `mode`.
    pub fn from_mode(mode: u32) -> Kind {
        match mode {
            0 => Kind::Absent,
            0o100644 => Kind::File,
            0o100755 => Kind::Executable,
            0o120000 => Kind::Link,
            0o160000 => Kind::Submodule,
            other => Kind::Other(other),
        }
    }
}

/// What would land: the job's own change, as shown before asking.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The project branch (its short name).
    pub target: String,
    /// The project branch's commit when shown: the merge's first parent.
    pub shown: String,
    /// The job's tip: the merge's second parent.
    pub tip: String,
    /// The merged tree (`merge-tree --write-tree` of the two: they are commit ids, so it is what
    /// lands); `None` when they conflict.
    pub tree: Option<String>,
    /// The job's commits the project branch does not have.
    pub commits: usize,
    /// What the merge changes on the project branch (the files of `merge-base...tip`, unless the
    /// two histories criss-cross, where git merges against a base of its own making); for a
    /// conflict, the files of `merge-base...tip`.
    pub changes: Vec<Change>,
    /// The project branch's commits since the job's base (0: it has not moved).
    pub moved: usize,
}

impl Preview {
    /// The paths of the changes.
    pub fn files(&self) -> Vec<String> {
        self.changes.iter().map(|c| c.path.clone()).collect()
    }
}

/// What a look at a job before merging found.
#[derive(Debug)]
pub enum Plan {
    /// The project branch has every commit of the job, or the change of each (a rebase or
    /// cherry-pick), or merging would change nothing (a squash merge).
    AlreadyIn {
        target: String,
    },
    Merge(Preview),
}

/// How a merge ended.
#[derive(Debug)]
pub enum Landing {
    /// The project branch is at `commit`, the merge.
    Landed { commit: String },
    /// The job's change conflicts with the project branch: the merge is in progress in the job's
    /// worktree, left for the user to resolve.
    Conflicted {
        worktree: PathBuf,
        files: Vec<String>,
        /// The worktree had been removed and was made again from the job's branch.
        recreated: bool,
    },
}
