//! Making the paths a policy marks `missing = "create"`: whether one can be made, and making it
//! (each missing parent included), recorded in `Made` so that a failed run undoes it.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use super::resolve::granted;
use super::{Access, Outcome, Resolved};
use crate::error::{Error, Result};
use crate::sandbox::made::Made;

/// Whether `path` can be made: its nearest existing ancestor is a directory isolate may write.
pub(super) fn creatable(path: &Path) -> Result<()> {
    let existing = path
        .ancestors()
        .skip(1)
        .find(|a| fs::symlink_metadata(a).is_ok())
        .unwrap_or(Path::new("/"));
    if !existing.is_dir() {
        return Err(Error::NotCreatable {
            ancestor: existing.to_path_buf(),
            errno: None,
        });
    }
    nix::unistd::access(
        existing,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .map_err(|errno| Error::NotCreatable {
        ancestor: existing.to_path_buf(),
        errno: Some(errno),
    })
}

/// Creates a `WillCreate` path, each missing parent included (mode 0700; a writable file 0600),
/// recording in `made` what it made; the rule it becomes.
pub(super) fn create(mut out: Resolved, made: &mut Made) -> Result<Resolved> {
    let Some(path) = out.path.take() else {
        return Ok(out);
    };
    let cannot = |source: std::io::Error| Error::CannotCreate {
        path: path.clone(),
        source,
    };
    let mut missing: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|a| fs::symlink_metadata(a).is_err())
        .collect();
    missing.reverse();
    for dir in missing {
        fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(cannot)?;
        made.directory(dir);
    }
    if out.access == Access::WriteFile {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(cannot)?;
        made.file(&path);
    } else {
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(cannot)?;
        made.directory(&path);
    }
    let canonical = fs::canonicalize(&path).map_err(cannot)?;
    out.outcome = Outcome::Created;
    out.detail = Some(format!("created {}", path.display()));
    Ok(granted(out, canonical))
}
