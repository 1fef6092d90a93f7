//! The object stores a repository borrows through `objects/info/alternates`, followed as git does
//! (relative entries from the objects directory, comments skipped, at most five levels): a
//! project that is itself a job's worktree (job/nest.rs) borrows the real project's, which its
//! readers must reach too, with the git directory around each (a job's configuration includes
//! its project's).

use std::path::{Path, PathBuf};

/// How deep git follows alternates.
const DEPTH: usize = 5;
/// An alternates file is a few lines; more than this is not read.
const MAX: u64 = 64 * 1024;

/// Every object directory `objects` borrows, and the git directory holding each, canonical.
pub fn borrowed(objects: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level = vec![objects.to_path_buf()];
    for _ in 0..DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            for entry in alternates(dir) {
                let Ok(real) = std::fs::canonicalize(dir.join(entry)) else {
                    continue;
                };
                if found.contains(&real) || real == objects {
                    continue;
                }
                if let Some(git_dir) = real.parent() {
                    if !found.iter().any(|p: &PathBuf| p == git_dir) {
                        found.push(git_dir.to_path_buf());
                    }
                }
                found.push(real.clone());
                next.push(real);
            }
        }
        level = next;
    }
    found
}

/// The entries of `objects/info/alternates`, as written.
fn alternates(objects: &Path) -> Vec<PathBuf> {
    let Ok(text) = crate::textfile::read_at_most(&objects.join("info/alternates"), MAX) else {
        return Vec::new();
    };
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from)
        .collect()
}
