//! The jobs started inside a job (job/nest.rs), as the state directory isolate made for them in
//! the job's record directory holds them (`nested/jobs/<id>`, `nested/worktrees/<key>/<id>`). The
//! job wrote everything in it: only directory names are read, never through a link, and only ids
//! isolate makes are named.

use std::fs;
use std::path::Path;

use crate::job::id::JobId;
use crate::job::nest;
use crate::worktree::inspect::Inspection;

/// At most this many entries are read of each directory; more is not a listing isolate made.
const MAX: usize = 1000;

/// Adds to `insp` the nested jobs of the job of `job_dir`: their ids, and a line of work for each
/// worktree of theirs still there (it keeps the job's worktree: its work, and a repository
/// borrowing the job's objects, would go with it). One that cannot be read keeps it too.
pub(super) fn add_nested_jobs(insp: &mut Inspection, job_dir: &Path) {
    match nested_jobs(job_dir) {
        Ok((ids, kept)) => {
            insp.nested_jobs = ids;
            insp.nested.extend(kept);
        }
        Err(e) => insp
            .nested
            .push(format!("the nested jobs' state, unreadable: {e}")),
    }
}

fn nested_jobs(job_dir: &Path) -> std::io::Result<(Vec<String>, Vec<String>)> {
    let state = nest::state_of(job_dir);
    // Not followed either: a link there (to the user's own state directory, say) would name its
    // jobs as this job's, and keep its worktree for them. (isolate makes it; the job cannot
    // replace it, its record directory being out of its reach.)
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
fn directories(dir: &Path) -> std::io::Result<(Vec<String>, bool)> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => {}
        _ => return Ok((Vec::new(), false)),
    }
    let entries = fs::read_dir(dir)?;
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
