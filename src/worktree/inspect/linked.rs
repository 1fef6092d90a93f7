//! The refs of the job's own linked worktrees (`git worktree add` inside the job): each one's HEAD
//! and its per-worktree refs (`refs/worktree/`, `refs/bisect/`, `refs/rewritten/`), which live in
//! `.git/worktrees/<name>/` and which no listing of the main worktree's refs shows. Read directly:
//! only regular files, never through a link, at most a bound of them and of each.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use gix::bstr::ByteSlice;

use super::error::InspectError;

/// More entries than this under `.git/worktrees/` and the inspection fails (the worktree is kept).
const MAX_ENTRIES: usize = 10_000;
/// Deeper than this below a linked worktree's `refs/` and the inspection fails too.
const MAX_DEPTH: usize = 32;

/// `("worktrees/<name>/HEAD", id)` for each linked worktree whose HEAD is detached, and
/// `("worktrees/<name>/refs/…", id)` for each of its own refs holding an id; symbolic ones are
/// left out (they name a ref counted where it lives).
pub(super) fn linked_refs(git_dir: &Path) -> Result<Vec<(String, String)>, InspectError> {
    let dir = git_dir.join("worktrees");
    let mut out = Vec::new();
    let mut seen = 0;
    let Some(entries) = list(&dir)? else {
        return Ok(out);
    };
    for name in entries {
        let linked = dir.join(&name);
        if !is_dir(&linked)? {
            continue;
        }
        let prefix = format!("worktrees/{}", name.to_string_lossy());
        if let Some(id) = read_id(&linked.join("HEAD"))? {
            out.push((format!("{prefix}/HEAD"), id));
        }
        walk(
            &linked.join("refs"),
            &format!("{prefix}/refs"),
            0,
            &mut seen,
            &mut out,
        )?;
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    name: &str,
    depth: usize,
    seen: &mut usize,
    out: &mut Vec<(String, String)>,
) -> Result<(), InspectError> {
    let Some(entries) = list(dir)? else {
        return Ok(());
    };
    if depth > MAX_DEPTH {
        return Err(too_many(dir));
    }
    for entry in entries {
        *seen += 1;
        if *seen > MAX_ENTRIES {
            return Err(too_many(dir));
        }
        let path = dir.join(&entry);
        let full = format!("{name}/{}", entry.to_string_lossy());
        if is_dir(&path)? {
            walk(&path, &full, depth + 1, seen, out)?;
        } else if let Some(id) = read_id(&path)? {
            out.push((full, id));
        }
    }
    Ok(())
}

fn too_many(dir: &Path) -> InspectError {
    InspectError::Io {
        path: dir.to_owned(),
        what: "too many linked worktree refs",
        source: std::io::Error::other("over the bound"),
    }
}

/// The names in `dir`, sorted; `None` when it is missing or not a real directory.
pub(super) fn list(dir: &Path) -> Result<Option<Vec<std::ffi::OsString>>, InspectError> {
    if !is_dir(dir)? {
        return Ok(None);
    }
    let io = |source| InspectError::Io {
        path: dir.to_owned(),
        what: "cannot list a linked worktree",
        source,
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        names.push(entry.map_err(io)?.file_name());
        if names.len() > MAX_ENTRIES {
            return Err(too_many(dir));
        }
    }
    names.sort();
    Ok(Some(names))
}

/// A real directory (not a link to one).
pub(super) fn is_dir(path: &Path) -> Result<bool, InspectError> {
    Ok(kind_of(path)?.is_some_and(|kind| kind.is_dir()))
}

/// The object id a regular file at `path` holds (a loose ref or a detached HEAD), or `None` (not a
/// regular file, symbolic, or not an id).
fn read_id(path: &Path) -> Result<Option<String>, InspectError> {
    Ok(read_small(path, 256)?.and_then(|content| {
        gix::ObjectId::from_hex(content.trim())
            .ok()
            .map(|id| id.to_string())
    }))
}

/// At most `limit` bytes of the regular file at `path`; `None` when it is not one (or missing).
/// The type is asked of the file opened (never through a link, and without waiting for a FIFO's
/// writer), so a file swapped in after a check is judged as what was opened.
pub(super) fn read_small(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, InspectError> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let io = |source| InspectError::Io {
        path: path.to_owned(),
        what: "cannot read a file of the git directory",
        source,
    };
    let file = match opened {
        Ok(file) => file,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    if !file.metadata().map_err(io)?.is_file() {
        return Ok(None);
    }
    let mut content = Vec::new();
    file.take(limit).read_to_end(&mut content).map_err(io)?;
    Ok(Some(content))
}

/// `path` with every link resolved.
pub(super) fn canonical(path: &Path) -> Result<PathBuf, InspectError> {
    std::fs::canonicalize(path).map_err(|source| InspectError::Io {
        path: path.to_owned(),
        what: "cannot resolve",
        source,
    })
}

/// `path` with every link resolved, or `None` when nothing is there to resolve (a name on the way
/// missing or not a directory, a loop of links). Any other failure (a directory on the way that
/// may not be searched) is an error: what cannot be looked at is never taken for nothing.
pub(super) fn resolved(path: &Path) -> Result<Option<PathBuf>, InspectError> {
    match std::fs::canonicalize(path) {
        Ok(real) => Ok(Some(real)),
        Err(e) if absent(&e) => Ok(None),
        Err(source) => Err(InspectError::Io {
            path: path.to_owned(),
            what: "cannot resolve",
            source,
        }),
    }
}

/// The type of what is at `path` itself (a link not followed), or `None` when nothing is there;
/// any other failure is an error, as for `resolved`.
pub(super) fn kind_of(path: &Path) -> Result<Option<std::fs::FileType>, InspectError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta.file_type())),
        Err(e) if absent(&e) => Ok(None),
        Err(source) => Err(InspectError::Io {
            path: path.to_owned(),
            what: "cannot look at",
            source,
        }),
    }
}

/// Whether a failure to reach `path` says only that nothing is there.
fn absent(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
    )
}
