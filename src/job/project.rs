//! Which project a job belongs to: the top level of the repository its worktree borrows from, or,
//! for a job run in place, the directory it ran in. The commands that speak of "this project's
//! jobs" (`ps`, `wait --all`, `merge --all`, `worktrees`, `prune`) ask it of every record, and name
//! it in their JSON rows.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::record::Record;

/// The project of `record`: its worktree's project top level, else the directory it ran in.
pub fn of(record: &Record) -> PathBuf {
    match &record.worktree {
        Some(wt) => PathBuf::from(&wt.repo),
        None => PathBuf::from(&record.cwd),
    }
}

/// Whether `record` is a job of the project whose top level is `top` (a job run in place belongs
/// to the project it ran anywhere in).
pub fn belongs(record: &Record, top: &Path) -> bool {
    match &record.worktree {
        Some(wt) => Path::new(&wt.repo) == top,
        None => Path::new(&record.cwd).starts_with(top),
    }
}

/// The project whose jobs a command speaks of: the one the caller is in, unless `all` (every
/// project's) or the caller is in none (`None`: every project's).
pub fn scope(state: &Path, all: bool) -> Result<Option<PathBuf>> {
    match all {
        true => Ok(None),
        false => here(state),
    }
}

/// Whether `record` is within `scope` (`None`: every project).
pub fn within(record: &Record, scope: Option<&Path>) -> bool {
    scope.map_or(true, |top| belongs(record, top))
}

/// The project the caller is in, if it is in one: its top level. Found from paths before git runs
/// there: in another job's worktree (the job's own config would be git's) it is an error.
pub fn here(state: &Path) -> Result<Option<PathBuf>> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("cannot read", ".", e))?;
    if let Some(written) = crate::job::worktrees::of_another_job(&cwd, state) {
        return Err(Error::Usage(format!(
            "{written}: run this in the project, not in a job's worktree"
        )));
    }
    Ok(Project::discover(&cwd).ok().map(|p| p.top))
}
