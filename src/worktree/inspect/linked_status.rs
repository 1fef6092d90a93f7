//! The status of the job's own linked worktrees whose work tree lies inside the job's worktree
//! directory (`git worktree add .git/side`, or into an ignored directory): removing the directory
//! removes their files, and the main worktree's status sees none of them (it never walks `.git`,
//! and counts an ignored directory as ignored). A linked worktree elsewhere keeps its files when the
//! worktree goes, so only its refs count (linked.rs). Each is read as the main one is: opened the
//! one safe way, HEAD bounded, its files regular and bounded, no driver known.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

use super::bounds::{check_head, MAX_PATHS};
use super::error::InspectError;
use super::forged::CheckedOut;
use super::inspection::Inspection;
use super::linked::{canonical, is_dir, list, read_small, resolved};
use super::open::open_untrusted;
use super::state::in_progress;
use super::status::count_status;

/// The files of a linked worktree's git directory read whole, and the most each may hold.
const READ_FIRST: [(&str, u64); 4] = [
    ("HEAD", 4 << 10),
    ("index", 1 << 30),
    ("commondir", 4 << 10),
    ("gitdir", 4 << 10),
];

/// Adds to `out` the status counts (and operations in progress) of every linked worktree of
/// `git_dir` whose work tree lies inside `worktree`; returns the repositories their statuses found
/// ignored, relative to `worktree`.
pub(super) fn add_linked_status(
    worktree: &Path,
    git_dir: &Path,
    out: &mut Inspection,
    checked_out: CheckedOut,
) -> Result<Vec<PathBuf>, InspectError> {
    let mut ignored = Vec::new();
    let dir = git_dir.join("worktrees");
    let Some(names) = list(&dir)? else {
        return Ok(ignored);
    };
    let inside = canonical(worktree)?;
    for name in names {
        let linked = dir.join(&name);
        if !is_dir(&linked)? {
            continue;
        }
        let Some(tree) = work_tree(&linked)? else {
            continue;
        };
        // A work tree that cannot be found is not here to be removed; one outside is not removed.
        let Some(tree) = resolved(&tree)? else {
            continue;
        };
        if !tree.starts_with(&inside) {
            continue;
        }
        check_files(&linked)?;
        let repo = open_untrusted(&tree, &linked)?;
        let common = canonical(repo.common_dir())?;
        if common != canonical(git_dir)? {
            return Err(not_repo(
                &linked,
                "its commondir is not the job's git directory",
            ));
        }
        check_head(&repo).map_err(|reason| not_repo(&linked, &reason))?;
        let mut counts = Inspection::default();
        let mut paths = MAX_PATHS;
        let found =
            count_status(&repo, &mut counts, &mut paths, checked_out).map_err(|source| {
                InspectError::Git {
                    path: tree.clone(),
                    what: "cannot compute the status of a linked worktree",
                    source,
                }
            })?;
        let from_top = tree.strip_prefix(&inside).unwrap_or(&tree);
        ignored.extend(found.into_iter().map(|rel| from_top.join(rel)));
        out.modified += counts.modified;
        out.untracked += counts.untracked;
        out.conflicted += counts.conflicted;
        out.ignored += counts.ignored;
        for op in in_progress(&linked) {
            if !out.in_progress.contains(&op) {
                out.in_progress.push(op);
            }
        }
    }
    Ok(ignored)
}

/// The work tree a linked worktree's `gitdir` file names (`<work tree>/.git`; relative to the
/// linked git directory when relative), `None` without one.
fn work_tree(linked: &Path) -> Result<Option<PathBuf>, InspectError> {
    let Some(content) = read_small(&linked.join("gitdir"), 4 << 10)? else {
        return Ok(None);
    };
    let named = Path::new(OsStr::from_bytes(content.trim())).to_path_buf();
    let dot_git = match named.is_absolute() {
        true => named,
        false => linked.join(named),
    };
    Ok(dot_git.parent().map(Path::to_path_buf))
}

/// The files gix reads whole: regular files of a bounded size if present.
fn check_files(linked: &Path) -> Result<(), InspectError> {
    for (name, limit) in READ_FIRST {
        if let Ok(meta) = std::fs::symlink_metadata(linked.join(name)) {
            if !meta.file_type().is_file() || meta.len() > limit {
                return Err(not_repo(
                    linked,
                    &format!("{name} is not a regular file of at most {limit} bytes"),
                ));
            }
        }
    }
    Ok(())
}

fn not_repo(linked: &Path, reason: &str) -> InspectError {
    InspectError::NotARepository {
        path: linked.to_owned(),
        reason: format!("a linked worktree: {reason}"),
    }
}
