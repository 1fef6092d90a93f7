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
    // The included file itself, or a directory (a link) on its way, as written or as resolved.
    let on_the_way = |name: &[u8]| {
        included.iter().any(|path| {
            path.as_slice() == name
                || (path.starts_with(name) && path.get(name.len()) == Some(&b'/'))
        })
    };
    if let Some(change) = involved.iter().find(|c| on_the_way(&c.name)) {
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
/// whatever their condition, each as written (`..` taken lexically) and as resolved through the
/// links there are now; and those an include of isolate's environment names (`GIT_CONFIG_COUNT`'s,
/// which git takes only as absolute or `~` paths). A configuration that cannot be read is an error.
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
        // 1: no include in any file (the environment's are looked at below).
        Some(0) | Some(1) => {}
        _ => {
            return Err(format!(
                "cannot read your git configuration: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
    let top = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut paths = Vec::new();
    // `--null`: origin NUL, then key NL value NUL, for each.
    let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    for pair in fields.chunks(2) {
        let [origin, entry] = pair else { continue };
        let Some(value) = entry.splitn(2, |&b| b == b'\n').nth(1) else {
            continue;
        };
        let base = match origin.strip_prefix(b"file:") {
            Some(file) => dir
                .join(OsStr::from_bytes(file))
                .parent()
                .map(Path::to_path_buf),
            None => None,
        };
        paths.extend(include_path(
            OsStr::from_bytes(value),
            base.as_deref(),
            &home,
        ));
    }
    // The hygiene of isolate's own git leaves these out; the user's next git reads them.
    let count = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|n| n.parse::<usize>().ok());
    for n in 0..count.unwrap_or(0).min(1_000) {
        let key = std::env::var(format!("GIT_CONFIG_KEY_{n}")).unwrap_or_default();
        let key = key.to_ascii_lowercase();
        if key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path")) {
            if let Some(value) = std::env::var_os(format!("GIT_CONFIG_VALUE_{n}")) {
                paths.extend(include_path(&value, None, &home));
            }
        }
    }
    let mut inside = Vec::new();
    for path in paths {
        for form in [lexical(&path), resolved(&path)] {
            let rel = form
                .strip_prefix(&top)
                .ok()
                .or_else(|| form.strip_prefix(dir).ok());
            if let Some(rel) = rel {
                inside.push(rel.as_os_str().as_bytes().to_vec());
            }
        }
    }
    Ok(inside)
}

/// An include's `value` as a path: `~/` under `home`, absolute as it is, relative beneath `base`
/// (the including file's directory; none for an include of the environment, which git refuses).
fn include_path(value: &OsStr, base: Option<&Path>, home: &Option<PathBuf>) -> Option<PathBuf> {
    let value = Path::new(value);
    match value.strip_prefix("~") {
        Ok(rest) => home.as_ref().map(|home| home.join(rest)),
        Err(_) if value.is_absolute() => Some(value.to_path_buf()),
        Err(_) => base.map(|base| base.join(value)),
    }
}

/// `path` with `.` and `..` taken as written, no link followed.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
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
