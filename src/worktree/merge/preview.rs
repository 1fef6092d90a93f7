//! The look before a merge: the job's commits imported when its worktree is there, and what the
//! merge would bring read in the project. Never changes a ref of the project but the job's branch.

use super::plan::{Plan, Preview};
use super::read::{changes, left_right, merge_tree, refs};
use crate::error::{Error, Result};
use crate::git;
use crate::worktree::cleanup::{self, Recorded, Settling};
use crate::worktree::standing;

/// git 2.38 has `merge-tree --write-tree`.
pub fn require_git() -> Result<()> {
    git::require(2, 38, "isolate merge (git merge-tree --write-tree)")
}

/// Imports the job's commits when its worktree is there, and reads what a merge would bring.
pub fn preview(recorded: &Recorded) -> Result<Plan> {
    let target = target(recorded)?;
    let project = &recorded.project;
    let path = recorded.checked_path()?;
    if path.is_dir() {
        cleanup::import_now(&recorded.job(Settling::End { keep: true }))?;
    }
    let branch = recorded.id.branch();
    let target_ref = format!("refs/heads/{target}");
    let job_ref = format!("refs/heads/{branch}");
    let [shown, tip] = refs(project, [&target_ref, &job_ref])?;
    let shown = shown.ok_or_else(|| {
        Error::Refused(format!("the project has no branch {target} to merge into"))
    })?;
    let tip = tip.ok_or_else(|| {
        Error::Refused(format!(
            "the project has no branch {branch}: nothing of job {} to merge",
            recorded.id
        ))
    })?;
    let standing = standing::standing(&project.top, &shown, &tip)?;
    if standing.landed() {
        return Ok(Plan::AlreadyIn { target });
    }
    let tree = merge_tree(project, &shown, &tip)?;
    let changes = match &tree {
        Some(tree) => changes(project, &shown, tree)?,
        None => {
            let fork = git::run(
                &project.top,
                ["merge-base", "--end-of-options", &shown, &tip],
            )?
            .text();
            changes(project, &fork, &tip)?
        }
    };
    let (moved, _) = left_right(project, &shown, &recorded.worktree.base)?;
    Ok(Plan::Merge(Preview {
        target,
        shown,
        tip,
        tree,
        commits: standing.ahead,
        changes,
        moved,
    }))
}

/// The project branch the job started from.
pub(super) fn target(recorded: &Recorded) -> Result<String> {
    recorded.worktree.project_branch.clone().ok_or_else(|| {
        Error::Refused(format!(
            "job {} started on a detached HEAD: there is no project branch to merge into \
             (git merge --no-ff {} yourself)",
            recorded.id,
            recorded.id.branch()
        ))
    })
}
