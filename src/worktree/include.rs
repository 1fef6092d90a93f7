//! `.worktreeinclude`: files of the project that match its patterns (gitignore syntax) *and* that
//! git ignores (`.env`, `config/local.toml`) are copied into a new worktree, modes kept. Symlinks are
//! copied as links, never followed; nothing is overwritten; nothing outside the project is read.
//! The worktree is the checkout of a commit a job may have made (`--base isolate/<id>`): every
//! write goes through a descriptor of the worktree, one component at a time, never following a
//! link, so a committed `config -> /anywhere` in place of a directory means the file is not
//! copied (and the start line says so), never that it is written at `/anywhere`.

use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{mkdirat, Mode};
use nix::unistd::symlinkat;

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;

/// What the copy did.
#[derive(Debug, Default)]
pub struct Included {
    /// Files copied.
    pub copied: usize,
    /// Files not copied because the worktree has a link (or a file) where a directory of their
    /// path was expected: the job's commit put it there.
    pub blocked: Vec<PathBuf>,
}

/// Copies the included files from the project's main checkout into `worktree`.
/// The patterns are the project's `.worktreeinclude`, else `configured` (the `include` key).
pub fn copy(project: &Project, worktree: &Path, configured: &[String]) -> Result<Included> {
    let file = project.top.join(".worktreeinclude");
    let from_file = fs::symlink_metadata(&file).is_ok_and(|meta| meta.is_file());
    let mut args: Vec<String> = ["ls-files", "-z", "--others", "--ignored"]
        .map(String::from)
        .to_vec();
    if from_file {
        args.push("--exclude-from=.worktreeinclude".into());
    } else if configured.is_empty() {
        return Ok(Included::default());
    } else {
        args.extend(configured.iter().map(|p| format!("--exclude={p}")));
    }
    // Untracked files matching the patterns, then only those git ignores.
    let matching = git::run(&project.top, &args)?;
    if matching.stdout.is_empty() {
        return Ok(Included::default());
    }
    let ignored = git::try_run_with_input(
        &project.top,
        ["check-ignore", "-z", "--stdin"],
        &matching.stdout,
    )?;
    let top =
        fs::canonicalize(&project.top).map_err(|e| Error::io("cannot resolve", &project.top, e))?;
    let root =
        open_dir(worktree).map_err(|e| Error::io("cannot open the worktree", worktree, e))?;
    let mut included = Included::default();
    for raw in ignored.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let rel = Path::new(std::ffi::OsStr::from_bytes(raw));
        if !is_plain_relative(rel) {
            continue;
        }
        match copy_one(&top, rel, &root)
            .map_err(|e| Error::io("cannot copy .worktreeinclude file", rel, e))?
        {
            Copy::Copied => included.copied += 1,
            Copy::Blocked => included.blocked.push(rel.to_path_buf()),
            Copy::Skipped => {}
        }
    }
    Ok(included)
}

/// What became of one file.
enum Copy {
    Copied,
    /// Not read: outside the project, or not a file or link; or the worktree has it already.
    Skipped,
    /// The worktree has a link or a file where a directory of its path was expected.
    Blocked,
}

/// Only `a/b/c`: no `..`, no root, no `.`.
fn is_plain_relative(rel: &Path) -> bool {
    rel.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Copies one file from the project's top `top` into the worktree `root` (a descriptor).
fn copy_one(top: &Path, rel: &Path, root: &OwnedFd) -> io::Result<Copy> {
    let source = top.join(rel);
    // A parent directory that is a symlink could lead outside the project.
    let parent = source.parent().unwrap_or(top);
    if !fs::canonicalize(parent)?.starts_with(top) {
        return Ok(Copy::Skipped);
    }
    let meta = fs::symlink_metadata(&source)?;
    if !meta.is_file() && !meta.file_type().is_symlink() {
        return Ok(Copy::Skipped);
    }
    let (Some(dir), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Ok(Copy::Skipped);
    };
    let Some(dir) = dir_beneath(root, dir)? else {
        return Ok(Copy::Blocked);
    };
    if meta.file_type().is_symlink() {
        return match symlinkat(&fs::read_link(&source)?, dir.as_fd(), name) {
            Ok(()) => Ok(Copy::Copied),
            Err(Errno::EEXIST) => Ok(Copy::Skipped),
            Err(e) => Err(e.into()),
        };
    }
    let mut from = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&source)?;
    let mode = meta.permissions().mode() & 0o7777;
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut to = match openat(dir.as_fd(), name, flags, Mode::from_bits_truncate(mode)) {
        Ok(fd) => fs::File::from(fd),
        // Something is there already (a file, or a link: never followed): nothing is overwritten.
        Err(Errno::EEXIST) => return Ok(Copy::Skipped),
        Err(e) => return Err(e.into()),
    };
    io::copy(&mut from, &mut to)?;
    to.set_permissions(fs::Permissions::from_mode(mode))?;
    Ok(Copy::Copied)
}

fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    Ok(nix::fcntl::open(path, flags, Mode::empty())?)
}

/// The directory `rel` beneath `root`, made where missing (mode 0755), one component at a time and
/// never through a link; `None` when a link or a file stands where one of its directories should.
fn dir_beneath(root: &OwnedFd, rel: &Path) -> io::Result<Option<OwnedFd>> {
    let mut dir = root.try_clone()?;
    for part in rel.components() {
        let Component::Normal(name) = part else {
            return Ok(None);
        };
        match mkdirat(dir.as_fd(), name, Mode::from_bits_truncate(0o755)) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        dir = match openat(dir.as_fd(), name, flags, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::ELOOP | Errno::ENOTDIR) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
    }
    Ok(Some(dir))
}
