//! The work a worktree holds, counted by kind: what keeps it when its job ends. Never counts what
//! the project already has.

use crate::worktree::inspect::Inspection;

/// Each kind of work that keeps a worktree, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Work {
    pub modified: usize,
    pub untracked: usize,
    pub conflicted: usize,
    pub stash_entries: usize,
    /// Other refs of the job holding commits the project does not have, commits only its reflogs
    /// reach, and repositories inside it holding work: what each is.
    pub refs: Vec<String>,
    pub in_progress: Vec<&'static str>,
    /// What the job's repository holds outside git's object store that the project lacks (LFS and
    /// git-annex objects), each kind in words.
    pub outside: Vec<String>,
}

impl Work {
    pub(super) fn of(insp: &Inspection, unimported: &[String], outside: &[String]) -> Work {
        Work {
            modified: insp.modified,
            untracked: insp.untracked,
            conflicted: insp.conflicted,
            stash_entries: insp.stash_entries,
            refs: unimported.to_vec(),
            in_progress: insp.in_progress.clone(),
            outside: outside.to_vec(),
        }
    }

    pub fn is_empty(&self) -> bool {
        *self == Work::default()
    }
}

/// "3 modified, 1 untracked, 1 stash entry".
impl std::fmt::Display for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        let mut count = |n: usize, one: &str, many: &str| {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        };
        count(self.modified, "modified", "modified");
        count(self.untracked, "untracked", "untracked");
        count(self.conflicted, "conflicted", "conflicted");
        count(self.stash_entries, "stash entry", "stash entries");
        count(
            self.refs.len(),
            "ref with commits not in the project",
            "refs with commits not in the project",
        );
        if !self.refs.is_empty() {
            // Which, the first few: a nested repository or a reflog says more than a count.
            let mut named: Vec<&str> = self.refs.iter().take(3).map(String::as_str).collect();
            if self.refs.len() > 3 {
                named.push("…");
            }
            if let Some(last) = parts.last_mut() {
                last.push_str(&format!(" ({})", named.join("; ")));
            }
        }
        for op in &self.in_progress {
            parts.push(format!("{op} in progress"));
        }
        parts.extend(self.outside.iter().cloned());
        f.write_str(&parts.join(", "))
    }
}
