//! The layout of a job's git directory, checked before gix opens it: a real directory, not a linked
//! worktree's, and the files gix reads whole regular and bounded. Never opens anything itself.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::error::InspectError;

/// `git_dir` must be a real directory and not a linked worktree's; the files gix reads whole must
/// be regular files of a bounded size if present (`READ_FIRST`).
pub(super) fn check_layout(git_dir: &Path) -> Result<(), InspectError> {
    let not_repo = |reason: String| InspectError::NotARepository {
        path: git_dir.to_owned(),
        reason,
    };
    let meta = std::fs::symlink_metadata(git_dir)
        .map_err(|err| not_repo(format!("cannot stat it: {err}")))?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(not_repo(
            "it is a symlink, not the job's own git directory".into(),
        ));
    }
    if !kind.is_dir() {
        return Err(not_repo(
            "it is not a directory (a gitfile would redirect to another git directory)".into(),
        ));
    }
    if std::fs::symlink_metadata(git_dir.join("commondir")).is_ok() {
        return Err(not_repo(
            "it has a commondir file, so it is not a job repository".into(),
        ));
    }
    for (name, limit) in READ_FIRST {
        if let Ok(meta) = std::fs::symlink_metadata(git_dir.join(name)) {
            if !meta.file_type().is_file() {
                return Err(not_repo(format!("{name} is not a regular file")));
            }
            if meta.len() > limit {
                return Err(not_repo(format!(
                    "{name} is {} bytes, more than a job repository's ever is ({limit})",
                    meta.len()
                )));
            }
        }
    }
    check_stores(git_dir).map_err(not_repo)?;
    check_tree_of_files(git_dir, "refs", |_| LOOSE_REF).map_err(not_repo)?;
    check_tree_of_files(git_dir, "worktrees", linked_file_limit).map_err(not_repo)?;
    check_alternates(&git_dir.join("objects"), &git_dir.join("objects"), 0).map_err(not_repo)
}

/// The refs and the index are where gix reads them: not in a reftable (gix reads only loose and
/// packed refs, so a decoy `refs/` beside a reftable hid every branch git sees) and not split
/// (the entries of a split index are partly in a `sharedindex.*` file, which git and gix merge
/// differently).
fn check_stores(git_dir: &Path) -> Result<(), String> {
    if std::fs::symlink_metadata(git_dir.join("reftable")).is_ok() {
        return Err("its refs are in a reftable, which the inspection cannot read".into());
    }
    let entries = std::fs::read_dir(git_dir).map_err(|e| format!("cannot list it: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list it: {e}"))?;
        if entry.file_name().as_bytes().starts_with(b"sharedindex.") {
            return Err(
                "its index is split (sharedindex), which the inspection cannot read".into(),
            );
        }
    }
    Ok(())
}

/// How deep a chain of alternates may go before the inspection gives up (git's own limit is 5).
const ALTERNATES_DEPTH: usize = 5;

/// The `info/alternates` of every object directory gix would borrow from, each a regular file of
/// a bounded size if present: gix follows the alternates of alternates, and a link from one of
/// those to a FIFO blocked the inspection forever (only the repository's own is in `READ_FIRST`).
/// A quoted entry, which this reading would not resolve as gix does, is refused, and so is a chain
/// deeper than git follows.
fn check_alternates(root: &Path, objects: &Path, depth: usize) -> Result<(), String> {
    let file = objects.join("info/alternates");
    let meta = match std::fs::symlink_metadata(&file) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => {
            return Err(format!(
                "cannot stat {}: {err}",
                crate::controls::name(&file.to_string_lossy())
            ))
        }
    };
    let limit = 64 << 10;
    if !meta.is_file() || meta.len() > limit {
        return Err(format!(
            "{} is not a regular file of at most {limit} bytes",
            crate::controls::name(&file.to_string_lossy())
        ));
    }
    if depth >= ALTERNATES_DEPTH {
        return Err(format!("alternates nest deeper than {ALTERNATES_DEPTH}"));
    }
    let mut content = Vec::new();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&file)
        .and_then(|f| f.take(limit).read_to_end(&mut content))
        .map_err(|err| {
            format!(
                "cannot read {}: {err}",
                crate::controls::name(&file.to_string_lossy())
            )
        })?;
    for line in content.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        if line.starts_with(b"\"") {
            return Err(format!(
                "{} holds a quoted entry",
                crate::controls::name(&file.to_string_lossy())
            ));
        }
        // gix resolves a relative entry against the repository's own object directory, git
        // against the one whose file names it: both are checked.
        let entry = std::ffi::OsStr::from_bytes(line);
        check_alternates(root, &root.join(entry), depth + 1)?;
        if objects != root {
            check_alternates(root, &objects.join(entry), depth + 1)?;
        }
    }
    Ok(())
}

/// `path` relative to `git_dir`, its control characters escaped (the job names it).
fn shown(git_dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(git_dir).unwrap_or(path);
    crate::controls::name(&rel.to_string_lossy())
}

/// The most a loose ref holds here (an id, or `ref: ` and a ref's name). gix reads one whole: a
/// sparse file of gigabytes would be read into memory all the same.
const LOOSE_REF: u64 = 64 << 10;

/// The most a file of a linked worktree's git directory (`worktrees/<name>/...`) holds: its index
/// and reflogs as much as the main ones, its refs as a loose ref, anything else 4 MiB.
fn linked_file_limit(rel: &Path) -> u64 {
    let mut parts = rel.components().map(|c| c.as_os_str());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(n), None) if n == "index" => 1 << 30,
        (Some(_), Some(n), Some(_)) if n == "logs" => 1 << 30,
        (Some(_), Some(n), Some(_)) if n == "refs" => LOOSE_REF,
        _ => 4 << 20,
    }
}

/// Every entry beneath `git_dir/name` is a directory or a regular file of at most `limit(its path
/// beneath git_dir/name)` bytes: gix opens a loose ref it looks up by name (HEAD's branch,
/// `refs/stash`, a linked worktree's HEAD) through a symlink, and one to a FIFO would block that
/// read forever; it reads one whole, however large. Walked without following links.
fn check_tree_of_files(
    git_dir: &Path,
    name: &str,
    limit: impl Fn(&Path) -> u64,
) -> Result<(), String> {
    let top = git_dir.join(name);
    // The directory itself a link (to `/`, say) would have the walk list another tree.
    if std::fs::symlink_metadata(&top).is_ok_and(|meta| !meta.is_dir()) {
        return Err(format!("{name} is not a directory"));
    }
    let mut pending = vec![top.clone()];
    while let Some(dir) = pending.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => return Err(format!("cannot list {}: {err}", shown(git_dir, &dir))),
        };
        for entry in entries {
            let path = entry
                .map_err(|err| format!("cannot list {}: {err}", shown(git_dir, &dir)))?
                .path();
            let meta = std::fs::symlink_metadata(&path)
                .map_err(|err| format!("cannot stat {}: {err}", shown(git_dir, &path)))?;
            if meta.is_dir() {
                pending.push(path);
            } else if !meta.is_file() {
                return Err(format!("{} is not a regular file", shown(git_dir, &path)));
            } else {
                let most = limit(path.strip_prefix(&top).unwrap_or(&path));
                if meta.len() > most {
                    return Err(format!(
                        "{} is {} bytes, more than a job repository's ever is ({most})",
                        shown(git_dir, &path),
                        meta.len()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The files of the git directory gix reads whole, and the most each may hold: a symlink there
/// could point at a FIFO (the read blocks) or `/dev/zero` (it never ends), and a sparse file of
/// gigabytes is read into memory all the same.
const READ_FIRST: [(&str, u64); 9] = [
    ("HEAD", 4 << 10),
    ("config", 4 << 20),
    ("index", 1 << 30),
    // (A job's repository holds its own few refs; gix quotes an unreadable one whole in its
    // error, some ten times its size in memory.)
    ("packed-refs", 64 << 20),
    ("info/exclude", 4 << 20),
    ("info/attributes", 4 << 20),
    ("info/grafts", 4 << 20),
    ("shallow", 64 << 20),
    ("objects/info/alternates", 64 << 10),
];
