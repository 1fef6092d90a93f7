//! `.worktreeinclude`: files of the project that match its patterns (gitignore syntax) *and* that
//! git ignores (`.env`, `config/local.toml`) are copied into a new worktree, modes kept. Symlinks are
//! copied as links, never followed; nothing is overwritten; nothing outside the project is read.

use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path};

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;

/// Copies the included files from the project's main checkout into `worktree`; returns how many.
/// The patterns are the project's `.worktreeinclude`, else `configured` (the `include` key).
pub fn copy(project: &Project, worktree: &Path, configured: &[String]) -> Result<usize> {
    let file = project.top.join(".worktreeinclude");
    let from_file = fs::symlink_metadata(&file).is_ok_and(|meta| meta.is_file());
    let mut args: Vec<String> = ["ls-files", "-z", "--others", "--ignored"]
        .map(String::from)
        .to_vec();
    if from_file {
        args.push("--exclude-from=.worktreeinclude".into());
    } else if configured.is_empty() {
        return Ok(0);
    } else {
        args.extend(configured.iter().map(|p| format!("--exclude={p}")));
    }
    // Untracked files matching the patterns, then only those git ignores.
    let matching = git::run(&project.top, &args)?;
    if matching.stdout.is_empty() {
        return Ok(0);
    }
    let ignored = git::try_run_with_input(
        &project.top,
        ["check-ignore", "-z", "--stdin"],
        &matching.stdout,
    )?;
    let top =
        fs::canonicalize(&project.top).map_err(|e| Error::io("cannot resolve", &project.top, e))?;
    let mut count = 0;
    for raw in ignored.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let rel = Path::new(std::ffi::OsStr::from_bytes(raw));
        if !is_plain_relative(rel) {
            continue;
        }
        if copy_one(&top, rel, worktree)
            .map_err(|e| Error::io("cannot copy .worktreeinclude file", rel, e))?
        {
            count += 1;
        }
    }
    Ok(count)
}

/// Only `a/b/c`: no `..`, no root, no `.`.
fn is_plain_relative(rel: &Path) -> bool {
    rel.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Copies one file; `Ok(false)` when it is skipped (it would be read outside the project, or the
/// worktree already has something at that path).
fn copy_one(top: &Path, rel: &Path, worktree: &Path) -> io::Result<bool> {
    let source = top.join(rel);
    // A parent directory that is a symlink could lead outside the project.
    let parent = source.parent().unwrap_or(top);
    if !fs::canonicalize(parent)?.starts_with(top) {
        return Ok(false);
    }
    let meta = fs::symlink_metadata(&source)?;
    let target = worktree.join(rel);
    if let Some(dir) = target.parent() {
        fs::create_dir_all(dir)?;
    }
    if fs::symlink_metadata(&target).is_ok() {
        return Ok(false);
    }
    if meta.file_type().is_symlink() {
        symlink(fs::read_link(&source)?, &target)?;
        return Ok(true);
    }
    if !meta.is_file() {
        return Ok(false);
    }
    let mut from = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&source)?;
    let mut to = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(meta.permissions().mode() & 0o7777)
        .open(&target)?;
    io::copy(&mut from, &mut to)?;
    to.set_permissions(fs::Permissions::from_mode(
        meta.permissions().mode() & 0o7777,
    ))?;
    Ok(true)
}
