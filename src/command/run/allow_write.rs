//! `--allow-write`, checked before anything is made: a path the user opens for one run may not
//! open what the sandbox is there to protect.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::sandbox::plan;

/// `--allow-write` may not open what the sandbox is there to protect: `/`, the project or a directory
/// above it, its git directory, isolate's state directory or the worktree root (and what holds
/// them), or a directory holding a credential store that exists. With `--worktree` the project is
/// the job's never, so a directory inside its checkout is refused too; without, a directory of the
/// checkout (`target`) is what the option is for. Refused before anything is made (status 125).
pub(super) fn check_allow_write(
    paths: &[PathBuf],
    state: &Path,
    project: Option<&Project>,
    worktree_root: &Path,
    worktree: bool,
) -> Result<()> {
    let real = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // Each protected place, and whether a writable path *inside* it is refused too.
    let mut protected: Vec<(PathBuf, &str, bool)> = Vec::new();
    if let Some(p) = project {
        protected.push((real(&p.top), "the project", worktree));
        protected.push((real(&p.caller_top), "the project's checkout", worktree));
        protected.push((real(&p.git_dir), "the project's git directory", true));
    }
    protected.push((real(state), "isolate's state directory", true));
    protected.push((real(worktree_root), "the worktree root", true));
    // The credential stores there are: a write rule holding one would open it (write rules are
    // not carved); one naming a store itself is the user's choice.
    let stores: Vec<PathBuf> = crate::sandbox::credentials::stores()
        .iter()
        .filter_map(|store| plan::expand(store).ok())
        .map(PathBuf::from)
        .filter(|store| store.symlink_metadata().is_ok())
        .map(|store| real(&store))
        .collect();
    for path in paths {
        let canonical = plan::allowed_write(path)?;
        let refuse = |what: &str| {
            Error::Usage(format!(
                "--allow-write {}: that is {what}; the sandbox never opens it to a job \
                 (refused: /, the project or a directory above it, its git directory, isolate's state \
                 directory, the worktree root)",
                path.display()
            ))
        };
        if canonical == Path::new("/") {
            return Err(refuse("the whole filesystem"));
        }
        for (place, what, inside) in &protected {
            if place.starts_with(&canonical) {
                return Err(refuse(&format!("{what} or a directory holding it")));
            }
            if *inside && canonical.starts_with(place) {
                return Err(refuse(&format!("inside {what}")));
            }
        }
        if let Some(store) = stores
            .iter()
            .find(|store| store.starts_with(&canonical) && **store != canonical)
        {
            return Err(Error::Usage(format!(
                "--allow-write {}: it holds the credential store {}, which a job may never \
                 read; name the directories beside it that the job needs",
                path.display(),
                store.display()
            )));
        }
    }
    Ok(())
}
