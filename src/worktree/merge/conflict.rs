//! A merge that conflicts, made in the job's worktree (made again from its branch when it was
//! removed), sandboxed under the job's policy with hooks off, and left there for the user. Never
//! runs git in the job's worktree outside the sandbox.

use std::path::Path;

use super::plan::{Landing, Preview};
use super::recreate::recreate;
use crate::error::{Error, Result};
use crate::git;
use crate::job::record::Record;
use crate::sandbox::policy::Loaded;
use crate::worktree::cleanup::{self, Recorded};
use crate::worktree::sandboxed;

/// A merge that conflicts is made in the job's worktree (made again from its branch when it was
/// removed), sandboxed under the job's policy with hooks off, and left there for the user.
pub(super) fn conflict(
    recorded: &Recorded,
    record: &Record,
    job_dir: &Path,
    policy: &Loaded,
    preview: &Preview,
) -> Result<Landing> {
    let project = &recorded.project;
    let path = recorded.checked_path()?;
    let recreated = !path.is_dir();
    if recreated {
        recreate(recorded, record, job_dir, policy, &preview.tip)?;
    } else {
        // The merge goes where the job's work is: never over work not committed yet, never on top
        // of a merge (or rebase) left in progress.
        // (Either refusal names the way back in: `isolate run --resume <id> -- "$SHELL"`.)
        let branch = recorded.id.branch();
        let insp = cleanup::inspect_bounded(path, &branch, project, job_dir).map_err(|why| {
            Error::WorktreeUnreadable {
                path: path.to_path_buf(),
                source: Box::new(why),
            }
        })?;
        if let Some(op) = insp.in_progress.first() {
            return Err(Error::OperationInProgress {
                op,
                job: recorded.id.to_string(),
                path: path.to_path_buf(),
            });
        }
        if insp.modified + insp.untracked + insp.conflicted > 0 {
            return Err(Error::UncommittedWork {
                job: recorded.id.to_string(),
                branch: recorded.id.branch(),
                target: preview.target.clone(),
                path: path.to_path_buf(),
            });
        }
    }
    let merge: Vec<&str> = git::NO_HOOKS
        .into_iter()
        .chain(["merge", "--no-edit", "--no-ff", &preview.shown])
        .collect();
    let merged = sandboxed::git(project, path, policy, &merge)?;
    let conflicts = sandboxed::git(
        project,
        path,
        policy,
        &["diff", "--name-only", "--diff-filter=U"],
    )?;
    let files: Vec<String> = conflicts.stdout.lines().map(str::to_string).collect();
    if merged.status == 0 || files.is_empty() {
        return Err(Error::NoCleanMerge {
            target: preview.target.clone(),
            branch: recorded.id.branch(),
            said: merged.stderr.trim().to_string(),
        });
    }
    Ok(Landing::Conflicted {
        worktree: path.to_path_buf(),
        files,
        recreated,
    })
}
