//! Files beneath a gitlink that no repository holds: neither the job's status nor the walk looks
//! beneath a gitlink, and removing the worktree removes them (nested.rs asks).

use std::path::Path;

use super::error::InspectError;
use super::linked::{canonical, kind_of};

/// The most entries counted beneath a gitlink that has no repository.
const MAX_LOOSE: usize = 100_000;

/// What lies in the directory at `top` with no repository of its own inside the worktree to hold
/// it (a plain directory where the index has a gitlink, or a `.git` naming one elsewhere): neither
/// the job's status nor the walk looks beneath a gitlink, and removing the worktree removes it.
/// Counted without following a link, at most `MAX_LOOSE` entries; an empty directory (a submodule
/// not checked out) holds nothing.
pub(super) fn loose_files(top: &Path, inside: &Path) -> Result<Option<String>, InspectError> {
    let is_dir = kind_of(top)?.is_some_and(|kind| kind.is_dir());
    if !is_dir || !canonical(top)?.starts_with(inside) {
        return Ok(None);
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| InspectError::Io {
            path,
            what: "cannot list a directory the index calls a gitlink",
            source,
        }
    };
    let (mut files, mut seen, mut pending) = (0usize, 0usize, vec![top.to_owned()]);
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io(&dir))? {
            let entry = entry.map_err(io(&dir))?;
            seen += 1;
            if seen > MAX_LOOSE {
                return Ok(Some(format!(
                    "more than {MAX_LOOSE} entries no repository holds"
                )));
            }
            match entry.file_type().map_err(io(&entry.path()))?.is_dir() {
                true => pending.push(entry.path()),
                false => files += 1,
            }
        }
    }
    Ok((files > 0).then(|| match files {
        1 => "1 file no repository holds".to_string(),
        n => format!("{n} files no repository holds"),
    }))
}
