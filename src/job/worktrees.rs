//! Whether a directory is inside a job's worktree, found from paths, isolate's roots and records,
//! and the mark in a repository's config, all read as text: nothing runs there. isolate never runs
//! git unsandboxed in a job's repository (docs/sandbox.md), so every command that would run git in
//! the current directory asks here first.

use std::fs;
use std::path::{Path, PathBuf};

use crate::job::{nest, roots, store};

/// The top of the job worktree `dir` is in, if it is one: a directory under the state directory
/// (its worktrees, the jobs' TMPDIRs), a worktree on record (one under a `worktree_root` of the
/// user's choosing), or a repository whose config carries isolate's `[isolate]` mark (which the
/// job can remove: the record is what counts).
///
/// The records are read only when `dir` is under a worktree root outside the state directory that
/// a job's worktree was made under (job/roots.rs), or when those roots are not known yet.
pub fn containing(dir: &Path, state: &Path) -> Option<PathBuf> {
    let dir = fs::canonicalize(dir).ok()?;
    let state = fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf());
    if dir.starts_with(&state) {
        return Some(dir);
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
    on_record.or_else(|| crate::git::mark::marked_top(&dir))
}

/// The top of the job worktree `dir` is in, unless it is the worktree of the job this isolate runs
/// inside (job/nest.rs), which is the project of the jobs started there.
pub fn of_another_job(dir: &Path, state: &Path) -> Option<PathBuf> {
    containing(dir, state).filter(|top| !is_outer_worktree(top))
}

/// `top` is the worktree of the job this isolate runs inside.
fn is_outer_worktree(top: &Path) -> bool {
    nest::outer()
        .and_then(|outer| outer.worktree.as_deref())
        .and_then(|worktree| fs::canonicalize(worktree).ok())
        .is_some_and(|worktree| fs::canonicalize(top).is_ok_and(|top| top == worktree))
}
