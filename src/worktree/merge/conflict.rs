//! A merge that conflicts, made in the job's worktree (made again from its branch when it was
//! removed), sandboxed under the job's policy with hooks off, and left there for the user. Never
//! runs git in the job's worktree outside the sandbox.

use std::path::Path;

use super::plan::{Landing, Preview};
use crate::error::{Error, Result};
use crate::job::record::Record;
use crate::job::store;
use crate::sandbox::policy::Loaded;
use crate::worktree::cleanup::{self, Recorded};
use crate::worktree::create;
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
        let insp = cleanup::inspect_bounded(path, &recorded.id.branch()).map_err(|why| {
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
    let merged = sandboxed::git(
        project,
        path,
        policy,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "merge",
            "--no-edit",
            "--no-ff",
            &preview.shown,
        ],
    )?;
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

/// The job's worktree, made again at its place from the job's branch: a fresh repository borrowing
/// the project's objects, its base pinned again, checked out at `tip` in the sandbox (the tree is
/// the job's: its attributes choose filters). The record says the worktree is back.
fn recreate(
    recorded: &Recorded,
    record: &Record,
    job_dir: &Path,
    policy: &Loaded,
    tip: &str,
) -> Result<()> {
    let project = &recorded.project;
    let path = recorded.checked_path()?;
    std::fs::create_dir_all(&recorded.key_dir)
        .map_err(|e| Error::io("cannot create", &recorded.key_dir, e))?;
    create::recreate(project, &recorded.id, path, &recorded.worktree.base)?;
    let mut back = record.clone();
    if let Some(wt) = back.worktree.as_mut() {
        wt.removed = false;
        wt.branch_kept = true;
        wt.branch_tip = Some(tip.to_string());
        wt.reason = "made again by isolate merge for a conflict".into();
        wt.handoff = Some(format!(
            "isolate run --resume {} -- \"$SHELL\"",
            recorded.id
        ));
    }
    store::write_record(job_dir, &back)?;
    cleanup::note_import(job_dir, tip);
    let branch = recorded.id.branch();
    let out = sandboxed::git(
        project,
        path,
        policy,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "checkout.workers=0",
            "checkout",
            "--quiet",
            "--force",
            "-B",
            &branch,
            tip,
            "--",
        ],
    )?;
    if out.status != 0 {
        return Err(Error::RecreatedCheckout {
            branch,
            path: path.to_path_buf(),
            stderr: out.stderr.trim().to_string(),
        });
    }
    Ok(())
}
