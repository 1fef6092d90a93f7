//! The merge made in the project from objects alone, checked to be the merge of what was shown, and
//! the project branch moved to it only from the commit shown; then verified. Never half-merges.

use std::path::Path;

use super::conflict::conflict;
use super::fast_forward::fast_forward;
use super::plan::{Landing, Preview};
use super::read::rev;
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::record::Record;
use crate::sandbox::policy::Loaded;
use crate::worktree::checkouts::{self, Hold};
use crate::worktree::cleanup::Recorded;

/// Merges what `preview` showed, with `message`. `record` and `job_dir` are the job's, updated
/// when a conflict makes its worktree again.
pub fn land(
    recorded: &Recorded,
    record: &Record,
    job_dir: &Path,
    policy: &Loaded,
    preview: &Preview,
    message: &str,
) -> Result<Landing> {
    let project = &recorded.project;
    let target_ref = format!("refs/heads/{}", preview.target);
    if rev(project, &target_ref)? != preview.shown {
        return Err(moved(preview));
    }
    // 1. The merge, computed in the project from objects alone when the preview was: no worktree,
    // nothing of the job's repository (hooks, drivers, configuration) is read or run.
    let Some(tree) = &preview.tree else {
        return conflict(recorded, record, job_dir, policy, preview);
    };
    let result = commit(project, preview, tree, message)?;
    // 2. Fast-forward, only from the commit that was shown, never where a checkout is in the
    // middle of a rebase or bisect of the branch, and in a checkout that has it only over files
    // the merge does not touch (uncommitted changes, untracked and ignored files are the user's).
    match checkouts::holding(project, &target_ref)? {
        Some(held) if held.hold != Hold::CheckedOut => {
            return Err(Error::TargetHeld {
                target: preview.target.clone(),
                held: held.to_string(),
            })
        }
        Some(held) => fast_forward(project, &held.dir, preview, &result, &target_ref)?,
        None => {
            git::run(
                &project.top,
                [
                    "update-ref",
                    "-m",
                    "isolate merge",
                    "--end-of-options",
                    &target_ref,
                    &result,
                    &preview.shown,
                ],
            )
            .map_err(|_| moved(preview))?;
        }
    }
    // 3. Verify.
    if rev(project, &target_ref)? != result {
        return Err(Error::NotFastForwarded {
            target: preview.target.clone(),
            commit: result,
        });
    }
    Ok(Landing::Landed { commit: result })
}

fn moved(preview: &Preview) -> Error {
    Error::TargetMoved {
        target: preview.target.clone(),
    }
}

/// The merge commit of `tree` with the shown commit of the project branch as first parent and the
/// job's tip as second, checked to be exactly that.
fn commit(project: &Project, preview: &Preview, tree: &str, message: &str) -> Result<String> {
    let result = git::run(
        &project.top,
        [
            "commit-tree",
            "-p",
            &preview.shown,
            "-p",
            &preview.tip,
            "-m",
            message,
            "--end-of-options",
            tree,
        ],
    )?
    .text();
    // What lands is what was shown: the merge of exactly the shown commits, nothing else.
    let landed = git::run(
        &project.top,
        // (No --end-of-options: rev-parse would print it. `result` is the hex id commit-tree gave.)
        [
            "rev-parse",
            &format!("{result}^{{tree}}"),
            &format!("{result}^1"),
            &format!("{result}^2"),
        ],
    )?
    .text();
    let expected = format!("{tree}\n{}\n{}", preview.shown, preview.tip);
    if landed != expected {
        return Err(Error::MergeNotShown {
            commit: result,
            target: preview.target.clone(),
        });
    }
    Ok(result)
}
