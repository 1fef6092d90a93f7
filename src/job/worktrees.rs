//! Whether a directory is inside a job's worktree, found from paths, isolate's roots and records,
//! and the mark in a repository's config, all read as text: nothing runs there. isolate never runs
//! git unsandboxed in a job's repository (docs/sandbox.md), so every command that would run git in
//! the current directory asks here first.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::job::{nest, roots, store};

/// Where a directory is that a job may have written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// In this job worktree (its top).
    Worktree(PathBuf),
    /// Beneath isolate's state directory (its worktrees, the jobs' TMPDIRs and records).
    State(PathBuf),
}

impl fmt::Display for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Written::Worktree(top) => {
                write!(f, "{} is the worktree of an isolate job", top.display())
            }
            Written::State(dir) => write!(
                f,
                "{} is inside isolate's state directory, where jobs write",
                dir.display()
            ),
        }
    }
}

/// Where `dir` is, if a job may have written it: a directory under the state directory (its
/// worktrees, the jobs' TMPDIRs), or in the top of a job worktree: a worktree on record (one under a `worktree_root` of the
/// user's choosing), or a repository whose config carries isolate's `[isolate]` mark (which the
/// job can remove: the record is what counts).
///
/// The records are read only when `dir` is under a worktree root outside the state directory that
/// a job's worktree was made under (job/roots.rs), or when those roots are not known yet.
pub fn containing(dir: &Path, state: &Path) -> Option<Written> {
    let dir = fs::canonicalize(dir).ok()?;
    let state = fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf());
    if let Ok(within) = dir.strip_prefix(&state) {
        // `worktrees/<project key>/<id>`: the default root's worktrees.
        let mut parts = within.components();
        let top: PathBuf = parts.by_ref().take(3).collect();
        return Some(
            match top.starts_with("worktrees") && top.components().count() == 3 {
                true => Written::Worktree(state.join(top)),
                false => Written::State(dir),
            },
        );
    }
    let known = roots::known(&state);
    // Each root as it resolves now: one moved since, or reached through a link re-pointed since,
    // is where its worktrees are now.
    let under_a_root = |roots: &[PathBuf]| {
        roots.iter().any(|root| {
            let now = fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            dir.starts_with(now)
        })
    };
    let on_record = match &known {
        Some(roots) if !under_a_root(roots) => None,
        _ => {
            let worktrees: Vec<PathBuf> = store::list_all(&state)
                .into_iter()
                .filter_map(|(_, record)| record.worktree)
                .map(|wt| PathBuf::from(wt.path))
                .collect();
            if known.is_none() {
                let _ = roots::fill(&state, worktrees.iter().map(PathBuf::as_path));
            }
            worktrees
                .into_iter()
                .filter_map(|wt| fs::canonicalize(wt).ok())
                .find(|tree| dir.starts_with(tree))
        }
    };
    on_record
        .or_else(|| crate::git::mark::marked_top(&dir))
        .map(Written::Worktree)
}

/// Where `dir` is that a job may have written, unless it is in the worktree of the job this
/// isolate runs inside (job/nest.rs), which is the project of the jobs started there.
pub fn of_another_job(dir: &Path, state: &Path) -> Option<Written> {
    containing(dir, state).filter(|written| match written {
        Written::Worktree(top) => !is_outer_worktree(top),
        Written::State(_) => true,
    })
}

/// `top` is the worktree of the job this isolate runs inside.
fn is_outer_worktree(top: &Path) -> bool {
    nest::outer()
        .and_then(|outer| outer.worktree.as_deref())
        .and_then(|worktree| fs::canonicalize(worktree).ok())
        .is_some_and(|worktree| fs::canonicalize(top).is_ok_and(|top| top == worktree))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_of_the_state_directory_is_a_worktree_only_under_its_worktrees() {
        let root = tempfile::tempdir().unwrap();
        let state = root.path().join("state");
        let tree = state.join("worktrees/app-1c9e33d0/fix-3fa2");
        let tmp = state.join("jobs/fix-3fa2/tmp");
        let elsewhere = root.path().join("app");
        for dir in [tree.join("src"), tmp.clone(), elsewhere.clone()] {
            fs::create_dir_all(dir).unwrap();
        }
        let real = |p: &Path| fs::canonicalize(p).unwrap();
        assert_eq!(
            containing(&tree.join("src"), &state),
            Some(Written::Worktree(real(&tree)))
        );
        assert_eq!(containing(&tmp, &state), Some(Written::State(real(&tmp))));
        assert_eq!(
            containing(&state.join("worktrees"), &state),
            Some(Written::State(real(&state.join("worktrees"))))
        );
        assert_eq!(containing(&elsewhere, &state), None);
    }
}
