//! The pattern files a status reads whole from the work tree, `.gitignore` and `.gitattributes` in
//! any directory, checked before gix reads them: each present must be a regular file (through a
//! link, as gix follows one) of at most git's own bound. gix reads them whole with no bound, so a
//! sparse file of gigabytes the job left there would be read into memory all the same. Never
//! opens anything itself.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use gix::bstr::ByteSlice;

/// git's own bound on a pattern file (`PATTERN_MAX_FILE_SIZE`, `ATTR_MAX_FILE_SIZE`); git skips a
/// larger one, here the status does not decide.
const MAX: u64 = 100 << 20;
const NAMES: [&str; 2] = [".gitignore", ".gitattributes"];

/// The pattern files of `dir`, a directory of the work tree, or what is wrong with one.
pub(super) fn check_dir(root: &Path, dir: &Path) -> Result<(), String> {
    for name in NAMES {
        let path = dir.join(name);
        let Ok(meta) = std::fs::metadata(&path) else {
            // Missing, or a link to nowhere: gix reads nothing either.
            continue;
        };
        // A directory by that name gix takes for no file.
        if meta.is_dir() || (meta.is_file() && meta.len() <= MAX) {
            continue;
        }
        let shown = path.strip_prefix(root).unwrap_or(&path).to_string_lossy();
        let shown = crate::controls::name(&shown);
        return Err(if meta.is_file() {
            format!(
                "{shown} is {} bytes, more than git reads of a pattern file ({MAX})",
                meta.len()
            )
        } else {
            format!("{shown} is not a regular file")
        });
    }
    Ok(())
}

/// The pattern files of the work tree's top and of every directory an entry of `index` is in.
/// (The directories the status finds untracked are checked as the walk reaches them:
/// tally.rs.)
pub(super) fn check_tracked_dirs(root: &Path, index: &gix::index::State) -> Result<(), String> {
    check_dir(root, root)?;
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut last: &[u8] = b"";
    for entry in index.entries() {
        let path = entry.path(index).as_bytes();
        let Some(slash) = path.rfind_byte(b'/') else {
            continue;
        };
        let parent = &path[..slash];
        if parent == last {
            continue;
        }
        last = parent;
        // The parent and each directory above it not seen yet (above a seen one, all were).
        let mut dir = parent;
        while seen.insert(dir) {
            check_dir(root, &root.join(OsStr::from_bytes(dir)))?;
            match dir.rfind_byte(b'/') {
                Some(slash) => dir = &dir[..slash],
                None => break,
            }
        }
    }
    Ok(())
}
