//! The jobs started inside a job (job/nest.rs), as its repository holds them: their state in
//! `.git/isolate` (`jobs/<id>`, `worktrees/<project key>/<id>`). Read from the outside, so only
//! directory names are read, never followed through a link, and only ids isolate makes are named.

use std::fs;
use std::path::Path;

use super::error::InspectError;
use crate::job::id::JobId;
use crate::job::nest::STATE_IN_GIT_DIR;

/// At most this many entries are read of each directory; more is not a listing isolate made.
const MAX: usize = 1000;

/// The nested jobs of the repository whose git directory is `git_dir`: their ids, sorted, and a
/// line for each worktree of theirs that is still there (it keeps the job's worktree: its work,
/// and a repository borrowing the job's objects, would go with it).
pub(super) fn nested_jobs(git_dir: &Path) -> Result<(Vec<String>, Vec<String>), InspectError> {
    let state = git_dir.join(STATE_IN_GIT_DIR);
    // The state directory itself is not followed either: a link there (to the user's own state
    // directory, say) would name its jobs as this job's, and keep its worktree for them.
    if !fs::symlink_metadata(&state).is_ok_and(|meta| meta.is_dir()) {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut ids: Vec<String> = directories(&state.join("jobs"))?
        .0
        .into_iter()
        .filter_map(|name| JobId::parse(&name).map(|id| id.to_string()))
        .collect();
    ids.sort();
    let mut kept = Vec::new();
    let (keys, mut more) = directories(&state.join("worktrees"))?;
    for key in keys {
        let (names, more_here) = directories(&state.join("worktrees").join(&key))?;
        more |= more_here;
        kept.extend(names.iter().map(|name| match JobId::parse(name) {
            Some(id) => format!("the worktree of nested job {id}"),
            None => "a directory among the nested jobs' worktrees".to_string(),
        }));
    }
    if more {
        kept.push("more nested job worktrees than isolate reads".to_string());
    }
    kept.sort();
    Ok((ids, kept))
}

/// The names of the directories in `dir` (not links), none when it is not a directory; and
/// whether it holds more entries than were read.
fn directories(dir: &Path) -> Result<(Vec<String>, bool), InspectError> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        _ => return Ok((Vec::new(), false)),
    }
    let entries = fs::read_dir(dir).map_err(|e| InspectError::Io {
        path: dir.to_owned(),
        what: "cannot read the nested jobs' state",
        source: e,
    })?;
    let mut names = Vec::new();
    let mut entries = entries.peekable();
    for entry in entries.by_ref().take(MAX) {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    Ok((names, entries.peek().is_some()))
}
