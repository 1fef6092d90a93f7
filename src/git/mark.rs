//! isolate's mark in a job repository's config (`[isolate] job = <id>`, written when the worktree
//! is made): how a directory is known to be inside a job's worktree from the outside, read as text,
//! running nothing there.

use std::path::{Path, PathBuf};

/// The config section that marks a job repository.
pub const SECTION: &str = "[isolate]";

/// The top of the job worktree that `dir` (or its nearest ancestor with a `.git`) is, if its config
/// carries the mark.
pub fn marked_top(dir: &Path) -> Option<PathBuf> {
    let top = dir.ancestors().find(|d| d.join(".git").exists())?;
    let config = crate::textfile::read(&top.join(".git/config")).ok()?;
    config
        .lines()
        .any(|l| l.trim() == SECTION)
        .then(|| top.to_path_buf())
}
