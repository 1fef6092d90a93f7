//! What the programs of the merge's checkout read as configuration from the files it writes: the
//! checkout runs with the user's rights, and git writes the job's files in index order, so a
//! program that starts later in the same checkout (git-lfs, as a filter) reads them. Two such
//! files: the top's `.lfsconfig`, where the user's git runs git-lfs (its server, its transfer
//! agent), and every file inside the checkout that the user's git configuration includes
//! (`include.path`, `includeIf.*.path`: a project that shares a tracked `.gitconfig`), which every
//! program of git's reads, with every key (a transfer agent's command, `core.fsmonitor`). A merge
//! that changes either is refused, why given.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::plan::Change;
use crate::git;

/// Why the merge's checkout may not write `involved` in the checkout `dir`, if it may not.
pub(super) fn read_as_configuration(dir: &Path, involved: &[Change]) -> Result<(), String> {
    if let Some(change) = involved.iter().find(|c| c.name == b".lfsconfig") {
        let filters = git::try_run(dir, ["config", "--get-regexp", r"^filter\.lfs\."]);
        // Exit 1: no such key; anything else, unknown, so taken as set.
        if !filters.is_ok_and(|out| out.status.code() == Some(1)) {
            return Err(format!(
                "the merge changes {}, which git-lfs would read with your credentials while the \
                 checkout writes the files it sends through LFS; read it, then merge with git \
                 yourself",
                crate::controls::name(&change.path)
            ));
        }
    }
    let included = included(dir)?;
    if let Some(change) = involved.iter().find(|c| included.contains(&c.name)) {
        return Err(format!(
            "the merge changes {}, which your git configuration includes: every git command \
             (and git-lfs during this checkout) would run with what the job wrote there; read it, \
             then merge with git yourself",
            crate::controls::name(&change.path)
        ));
    }
    Ok(())
}

/// The files inside `dir` (relative, as bytes) that the configuration git reads there includes,
/// whatever their condition; a configuration that cannot be read is an error.
fn included(dir: &Path) -> Result<Vec<Vec<u8>>, String> {
    let out = git::try_run(
        dir,
        [
            "config",
            "--show-origin",
            "--null",
            "--get-regexp",
            r"^include(if\..*)?\.path$",
        ],
    )
    .map_err(|e| format!("cannot read your git configuration: {e}"))?;
    match out.status.code() {
        Some(0) => {}
        Some(1) => return Ok(Vec::new()),
        _ => {
            return Err(format!(
                "cannot read your git configuration: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
    let top = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    // `--null`: origin NUL, then key NL value NUL, for each.
    let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    let mut inside = Vec::new();
    for pair in fields.chunks(2) {
        let [origin, entry] = pair else { continue };
        let Some(origin) = origin.strip_prefix(b"file:") else {
            continue;
        };
        let Some(value) = entry.splitn(2, |&b| b == b'\n').nth(1) else {
            continue;
        };
        let origin = dir.join(OsStr::from_bytes(origin));
        let value = Path::new(OsStr::from_bytes(value));
        let path = match value.strip_prefix("~") {
            Ok(rest) => match &home {
                Some(home) => home.join(rest),
                None => continue,
            },
            Err(_) => origin.parent().unwrap_or(dir).join(value),
        };
        if let Ok(rel) = resolved(&path).strip_prefix(&top) {
            inside.push(rel.as_os_str().as_bytes().to_vec());
        }
    }
    Ok(inside)
}

/// `path` with its existing directories resolved (links followed) and the rest taken lexically:
/// an included file the job's change adds does not exist yet.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while std::fs::canonicalize(&existing).is_err() {
        let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
            return path.to_path_buf();
        };
        rest.push(name);
        if !existing.pop() {
            return path.to_path_buf();
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        match Path::new(&name).components().next() {
            Some(Component::ParentDir) => {
                out.pop();
            }
            Some(Component::CurDir) | None => {}
            Some(_) => out.push(name),
        }
    }
    out
}
