//! The project's checkouts as `git worktree list --porcelain` lists them (git 2.47's
//! `get_worktrees`): the main one (the common dir's real path, `/.git` stripped) and each entry of
//! `<common dir>/worktrees` whose `gitdir` file names a path, each with the branch its HEAD is on.
//! Read in-process for the common case; whatever git would read otherwise or differently (refs in
//! a reftable, a config that could make the main checkout bare, a HEAD that is a link or not plain
//! text, a HEAD on a ref that could itself be symbolic, a relative `gitdir`, any error but a
//! missing file) is `None`: git's to list, as before.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::git::project::Project;
use crate::textfile;

/// A checkout: its directory, the full name of the branch its HEAD is on (`None`: detached or
/// no HEAD), and whether it is locked (kept whether or not its directory is there: on a device
/// that is not always mounted, git-worktree(1)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Listed {
    pub dir: PathBuf,
    pub branch: Option<String>,
    pub locked: bool,
}

/// Every checkout of the project, or `None` when git must say.
pub(super) fn list(project: &Project) -> Option<Vec<Listed>> {
    let common = project.git_dir.as_path();
    if fs::symlink_metadata(common.join("reftable")).is_ok() || could_be_bare(common)? {
        return None;
    }
    let main = strip_dot_git(fs::canonicalize(common).ok()?.to_str()?)?;
    let mut out = vec![Listed {
        dir: PathBuf::from(main),
        branch: head_branch(common, &common.join("HEAD"))?,
        locked: false,
    }];
    let admin = common.join("worktrees");
    let entries = match fs::read_dir(&admin) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(out),
        Err(_) => return None,
    };
    for entry in entries {
        let dir = admin.join(entry.ok()?.file_name());
        // git skips an entry whose `gitdir` it cannot read or is empty.
        let Some(gitdir) = optional(textfile::read_untrusted(&dir.join("gitdir"), 4 << 10))? else {
            continue;
        };
        if gitdir.is_empty() {
            continue;
        }
        let path = strip_dot_git(gitdir.trim_end())?;
        if !Path::new(&path).is_absolute() {
            return None;
        }
        out.push(Listed {
            dir: PathBuf::from(path),
            branch: head_branch(common, &dir.join("HEAD"))?,
            // A `locked` file, whatever it holds (its reason), as git's `is_worktree_locked`.
            locked: fs::symlink_metadata(dir.join("locked")).is_ok(),
        });
    }
    Some(out)
}

/// Whether git could read the project's main checkout as a bare repository, which it lists as
/// `bare`, with no branch (the bare clone whose checkouts are all linked, in `.git` or
/// `repo.git`): `core.bare` true, or a config it cannot be told from here (a `bare` other than
/// git init's `bare = false`, in any section; an include; per-worktree config). `None`: unreadable.
fn could_be_bare(common: &Path) -> Option<bool> {
    let config = optional(textfile::read_untrusted(&common.join("config"), 64 << 10))?;
    let config = config.unwrap_or_default().to_ascii_lowercase();
    Some(
        config.contains("include")
            || config.contains("worktreeconfig")
            || config.lines().map(str::trim).any(|line| {
                line.contains("bare") && !matches!(line, "bare = false" | "bare=false")
            }),
    )
}

/// `path` without a trailing `/.git`; `None` for a path git would print otherwise than it reads
/// (a newline in it: the porcelain is line-based without `-z`, and nothing here guesses).
fn strip_dot_git(path: &str) -> Option<String> {
    if path.contains('\n') {
        return None;
    }
    Some(path.strip_suffix("/.git").unwrap_or(path).to_string())
}

/// The branch the HEAD file at `head` is on: `Some(None)` when it is detached or missing,
/// `None` when git must say (a link, not text, not a ref or an id, a branch that could be
/// symbolic in turn: git reports the end of the chain).
fn head_branch(common: &Path, head: &Path) -> Option<Option<String>> {
    let Some(text) = optional(textfile::read_untrusted(head, 4 << 10))? else {
        return Some(None);
    };
    let text = text.trim_end();
    let Some(target) = text.strip_prefix("ref:") else {
        return is_object_id(text).then_some(None);
    };
    let target = target.trim_start();
    let short = target.strip_prefix("refs/heads/")?;
    if short.is_empty()
        || short
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return None;
    }
    // The branch itself: missing (unborn, or packed: a packed ref is never symbolic) or an id.
    match optional(textfile::read_untrusted(&common.join(target), 4 << 10))? {
        None => {}
        Some(value) if is_object_id(value.trim_end()) => {}
        Some(_) => return None,
    }
    Some(Some(target.to_string()))
}

/// Whether `text` is a full object id (sha1 or sha256), as a detached HEAD holds.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A read that may find nothing: `Some(None)` for a missing file (or a missing directory on the
/// way), `None` for any other failure.
fn optional(read: io::Result<String>) -> Option<Option<String>> {
    match read {
        Ok(text) => Some(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(None),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Some(None),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests;
