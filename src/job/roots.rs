//! The worktree roots outside the state directory that jobs' worktrees were made under (a
//! `worktree_root` of the user's choosing), one file each in `<state>/roots/`: so that "is this
//! directory inside a job's worktree?" reads this directory, not every record. A root is written
//! before the first worktree under it is made, and never removed (a root names no job).
//!
//! A state directory without `roots/` was used by an isolate from before it: its records are read
//! once to fill it (`fill`).

use std::ffi::OsStr;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::sys::atomic;

fn roots_dir(state: &Path) -> PathBuf {
    state.join("roots")
}

/// The file that names `root`: FNV-1a of its bytes, in hex (stable across builds and versions).
fn entry(state: &Path, root: &Path) -> PathBuf {
    let hash = root
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    roots_dir(state).join(format!("{hash:016x}"))
}

/// Records `root` (absolute: as configured, or as it resolves), if it is outside `state` and not
/// yet known.
pub fn register(state: &Path, root: &Path) -> Result<()> {
    if root.starts_with(state) {
        return Ok(());
    }
    let path = entry(state, root);
    if fs::read(&path).is_ok_and(|known| known == root.as_os_str().as_bytes()) {
        return Ok(());
    }
    let dir = roots_dir(state);
    fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    atomic::write(&path, root.as_os_str().as_bytes())
}

/// The roots on record; `None` when no isolate has kept them in this state directory yet.
pub fn known(state: &Path) -> Option<Vec<PathBuf>> {
    let entries = match fs::read_dir(roots_dir(state)) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return None,
        // Unreadable: as if unknown, so that the caller reads the records.
        Err(_) => return None,
    };
    let mut roots = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.as_bytes().starts_with(b".") {
            continue;
        }
        match fs::read(entry.path()) {
            Ok(bytes) => roots.push(PathBuf::from(OsStr::from_bytes(&bytes))),
            Err(_) => return None,
        }
    }
    Some(roots)
}

/// Fills `roots/` from the worktrees of `records` (each is `<root>/<key>/<id>`), and makes it
/// even when none is outside `state`, so that the records are read this once.
pub fn fill<'a>(state: &Path, worktrees: impl IntoIterator<Item = &'a Path>) -> Result<()> {
    for worktree in worktrees {
        if let Some(root) = worktree.parent().and_then(Path::parent) {
            register(state, root)?;
            if let Ok(real) = fs::canonicalize(root) {
                register(state, &real)?;
            }
        }
    }
    let dir = roots_dir(state);
    fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_outside_the_state_directory_are_kept_once_each() {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        assert_eq!(known(&state), None);
        let custom = tmp.path().join("my worktrees\nroot");
        fill(&state, [state.join("worktrees/app-1/x-1").as_path()]).unwrap();
        assert_eq!(known(&state), Some(vec![]));
        register(&state, &custom).unwrap();
        register(&state, &custom).unwrap();
        register(&state, &state.join("worktrees")).unwrap();
        assert_eq!(known(&state), Some(vec![custom.clone()]));
        let other = tmp.path().join("elsewhere");
        fill(&state, [other.join("app-2/y-2").as_path()]).unwrap();
        let mut got = known(&state).unwrap();
        got.sort();
        assert_eq!(got, vec![other, custom]);
    }
}
