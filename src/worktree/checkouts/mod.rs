//! The project's checkouts (its main worktree and the linked ones) and what each holds: the branch
//! it has checked out, or the branch a rebase or bisect in it will come back to. A branch a
//! checkout holds is never deleted or moved behind it: `merge` fast-forwards it in that checkout (or
//! refuses during a rebase or bisect), and `rm` and `prune` keep it.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::git;
use crate::git::project::Project;
use crate::textfile;

mod listed;

use listed::Listed;

/// How a checkout holds a branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    CheckedOut,
    Rebasing,
    Bisecting,
}

/// A checkout holding a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub dir: PathBuf,
    pub hold: Hold,
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self.hold {
            Hold::CheckedOut => "checked out",
            Hold::Rebasing => "being rebased",
            Hold::Bisecting => "being bisected",
        };
        write!(f, "{how} in {}", self.dir.display())
    }
}

/// The checkout of the project that holds `reference` (a full ref name), if one does.
pub fn holding(project: &Project, reference: &str) -> Result<Option<Held>> {
    let listed = match listed::list(project) {
        Some(listed) => listed,
        None => from_git(project)?,
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    for checkout in listed {
        // A checkout whose directory is gone holds nothing (git prunes it), unless it is locked.
        let there = checkout.locked || checkout.dir.is_dir();
        if checkout.branch.as_deref() == Some(reference) && there {
            return Ok(Some(Held {
                dir: checkout.dir,
                hold: Hold::CheckedOut,
            }));
        }
        dirs.push(checkout.dir);
    }
    for (i, dir) in dirs.into_iter().enumerate() {
        // The main checkout (listed first) has the common dir: git lists it by that dir's path,
        // which names no checkout where it is not `<top>/.git` (`--separate-git-dir`, a submodule).
        let git_dir = match i {
            0 => Some(project.git_dir.clone()),
            _ => git_dir_of(&dir),
        };
        let Some(git_dir) = git_dir else {
            continue;
        };
        let read = |name: &str| {
            textfile::read_untrusted(&git_dir.join(name), 4 << 10)
                .ok()
                .map(|t| t.trim().to_string())
        };
        let rebasing = ["rebase-merge/head-name", "rebase-apply/head-name"]
            .iter()
            .any(|name| read(name).as_deref() == Some(reference));
        let bisecting = read("BISECT_START")
            .is_some_and(|b| b == reference || format!("refs/heads/{b}") == reference);
        let hold = match (rebasing, bisecting) {
            (true, _) => Hold::Rebasing,
            (_, true) => Hold::Bisecting,
            _ => continue,
        };
        return Ok(Some(Held { dir, hold }));
    }
    Ok(None)
}

/// The checkouts as `git worktree list --porcelain -z` lists them. A path is taken as the bytes
/// git printed: made text (`café` in Latin-1 read as `caf\u{fffd}`), it names no directory, and
/// the branch checked out there would read as held nowhere.
fn from_git(project: &Project) -> Result<Vec<Listed>> {
    let list = git::run(&project.top, ["worktree", "list", "--porcelain", "-z"])?;
    let mut listed: Vec<Listed> = Vec::new();
    for field in list.stdout.split(|&b| b == 0) {
        if let Some(path) = field.strip_prefix(b"worktree ") {
            listed.push(Listed {
                dir: PathBuf::from(OsStr::from_bytes(path)),
                branch: None,
                locked: false,
            });
        } else if let Some(last) = listed.last_mut() {
            if let Some(branch) = field.strip_prefix(b"branch ") {
                last.branch = Some(String::from_utf8_lossy(branch).into_owned());
            } else if field == b"locked" || field.starts_with(b"locked ") {
                last.locked = true;
            }
        }
    }
    Ok(listed)
}

/// The git directory of linked checkout `dir`: the one its `.git` file names.
fn git_dir_of(dir: &Path) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    let meta = std::fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    // Bytes, not text: the admin directory is named after the checkout's, whatever its encoding.
    let bytes = textfile::read_untrusted_bytes(&dot_git, 4 << 10).ok()?;
    let named = PathBuf::from(OsStr::from_bytes(
        bytes.trim_ascii().strip_prefix(b"gitdir: ")?,
    ));
    Some(if named.is_absolute() {
        named
    } else {
        dir.join(named)
    })
}
