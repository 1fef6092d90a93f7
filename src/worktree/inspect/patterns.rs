//! The pattern files a status reads whole, `.gitignore` and `.gitattributes` in any directory of
//! the work tree, checked before gix reads them. gix reads each whole with no bound and keeps every
//! line it parsed (some fifty times the file's size in memory for a file of short lines), so a
//! sparse file of gigabytes, or a hundred directories of large ones, would be read all the same.
//! gix opens them without following a link, and where the work tree has a link or nothing it
//! reads the blob the index names instead: so each present must be a regular file (a FIFO would
//! block the open), each file or blob at most `MAX`, and all of them together at most `BUDGET`.
//! Never opens anything itself.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use gix::bstr::ByteSlice;

/// The most one pattern file may hold. git reads up to 100 MiB of one; a job's worktree with more
/// than this is kept as unreadable (a generated `.gitattributes` of 300,000 lines is 5.5 MB).
const MAX: u64 = 8 << 20;
/// The most all of them may hold together.
pub(super) const BUDGET: u64 = 16 << 20;
const NAMES: [&str; 2] = [".gitignore", ".gitattributes"];

/// The pattern files of `dir`, a directory of the work tree, taken from `budget`; or what is
/// wrong with one.
pub(super) fn check_dir(root: &Path, dir: &Path, budget: &mut u64) -> Result<(), String> {
    for name in NAMES {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        // A link, or a directory, gix takes for no file (it reads the index's blob: checked with
        // the index).
        if meta.is_symlink() || meta.is_dir() {
            continue;
        }
        let shown = shown(root, &path);
        if !meta.is_file() {
            return Err(format!("{shown} is not a regular file"));
        }
        take(budget, meta.len(), &shown)?;
    }
    Ok(())
}

/// The pattern files of the work tree's top and of every directory an entry of `index` is in, and
/// the blobs of the pattern files `index` names where the work tree has no regular file for them;
/// taken from `budget`. (The directories the status finds untracked are checked as the walk
/// reaches them: tally.rs.)
pub(super) fn check_tracked(
    repo: &gix::Repository,
    root: &Path,
    index: &gix::index::State,
    budget: &mut u64,
) -> Result<(), String> {
    check_dir(root, root, budget)?;
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut last: &[u8] = b"";
    for entry in index.entries() {
        let path = entry.path(index).as_bytes();
        let (parent, name) = match path.rfind_byte(b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&path[..0], path),
        };
        if NAMES.iter().any(|n| n.as_bytes() == name) {
            check_blob(repo, root, path, entry.id, budget)?;
        }
        if parent.is_empty() || parent == last {
            continue;
        }
        last = parent;
        // The parent and each directory above it not seen yet (above a seen one, all were).
        let mut dir = parent;
        while seen.insert(dir) {
            check_dir(root, &root.join(OsStr::from_bytes(dir)), budget)?;
            match dir.rfind_byte(b'/') {
                Some(slash) => dir = &dir[..slash],
                None => break,
            }
        }
    }
    Ok(())
}

/// The blob the index names for the pattern file at `path`, where gix would read it: the work tree
/// holds no regular file there. A blob that cannot be found gix cannot read either.
fn check_blob(
    repo: &gix::Repository,
    root: &Path,
    path: &[u8],
    id: gix::ObjectId,
    budget: &mut u64,
) -> Result<(), String> {
    let on_disk = root.join(OsStr::from_bytes(path));
    if std::fs::symlink_metadata(&on_disk).is_ok_and(|meta| meta.is_file()) {
        return Ok(());
    }
    let Ok(header) = repo.find_header(id) else {
        return Ok(());
    };
    take(
        budget,
        header.size(),
        &format!("the blob of {}", shown(root, &on_disk)),
    )
}

fn take(budget: &mut u64, len: u64, shown: &str) -> Result<(), String> {
    if len > MAX {
        return Err(format!(
            "{shown} is {len} bytes, more than isolate reads of a pattern file ({MAX})"
        ));
    }
    *budget = budget.checked_sub(len).ok_or_else(|| {
        format!("the .gitignore and .gitattributes files hold more than {BUDGET} bytes together")
    })?;
    Ok(())
}

/// `path` relative to the work tree, its control characters escaped (the job names it).
fn shown(root: &Path, path: &Path) -> String {
    crate::controls::name(&path.strip_prefix(root).unwrap_or(path).to_string_lossy())
}
