//! Repositories the status never looks into, and which go with the worktree all the same: one
//! made in a directory of tracked files (`git init` in `a/`, where `a/x` is tracked; the walk skips
//! every entry named `.git`, as git's does, so it is neither untracked nor ignored), and one made
//! inside the git directory itself (`.git/side/.git`, a bare `.git/hid.git`), which no walk
//! enters. Each is then looked into as a gitlinked one is (nested.rs).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, BString, ByteSlice};

use super::ignored::repositories_in;

/// The directories of tracked files in `index` (relative to the work tree at `root`) that hold a
/// `.git` of any kind (the `.git` itself not followed; one reached through a linked directory is
/// returned, and passed over by the look into it, which compares it with its place); one that
/// cannot be looked at (`EACCES`, a job's `chmod 000`) is returned too, for that look to fail and
/// keep the worktree.
/// A directory `settled` names (settled.rs) holds none: it holds nothing the index does not name.
pub(super) fn in_tracked_directories(
    root: &Path,
    index: &gix::index::State,
    settled: &HashSet<BString>,
) -> Vec<PathBuf> {
    let mut dirs: HashSet<&BStr> = HashSet::new();
    let mut last: Option<&BStr> = None;
    for entry in index.entries() {
        let path = entry.path(index);
        let Some(slash) = path.rfind_byte(b'/') else {
            continue;
        };
        let mut dir: &BStr = path[..slash].as_bstr();
        if last == Some(dir) {
            continue;
        }
        last = Some(dir);
        // Its ancestors up to the first already known (whose own are known then too).
        while dirs.insert(dir) {
            match dir.rfind_byte(b'/') {
                Some(slash) => dir = dir[..slash].as_bstr(),
                None => break,
            }
        }
    }
    let mut found: Vec<PathBuf> = dirs
        .into_iter()
        .filter(|dir| !settled.contains(*dir))
        .filter(|dir| dir.split(|&b| b == b'/').all(plain))
        .map(|dir| PathBuf::from(OsStr::from_bytes(dir)))
        .filter(|dir| match root.join(dir).join(".git").symlink_metadata() {
            Ok(_) => true,
            Err(e) => !matches!(
                e.raw_os_error(),
                Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
            ),
        })
        .collect();
    found.sort();
    found
}

/// The repositories inside the git directory `git_dir` of the work tree at `root` (relative to
/// the work tree; as absolute paths for a git directory elsewhere, a submodule's in
/// `.git/modules`), found by listing each of its directories as an ignored one is (ignored.rs).
pub(super) fn in_git_dir(root: &Path, git_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rel = git_dir.strip_prefix(root).unwrap_or(git_dir);
    let entries =
        std::fs::read_dir(git_dir).map_err(|e| format!("cannot list the git directory: {e}"))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list the git directory: {e}"))?;
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            dirs.push(rel.join(entry.file_name()));
        }
    }
    repositories_in(root, &dirs)
}

/// A path component a directory of tracked files can have (git refuses the others).
fn plain(name: &[u8]) -> bool {
    !name.is_empty() && name != b"." && name != b".." && !name.eq_ignore_ascii_case(b".git")
}
