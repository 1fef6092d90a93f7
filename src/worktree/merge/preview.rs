//! The look before a merge: the job's commits imported when its worktree is there, and what the
//! merge would bring read in the project. Never changes a ref of the project but the job's branch.

use super::plan::{Plan, Preview};
use super::read::{changes, merge_tree};
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
    let [shown, tip] = project.refs([&target_ref, &job_ref])?;
    let shown = shown.ok_or_else(|| Error::NoTargetBranch {
        target: target.clone(),
    })?;
    let tip = tip.ok_or_else(|| Error::NoJobBranch {
        job: recorded.id.to_string(),
        branch: branch.clone(),
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
    let (moved, _) = standing::left_right(&project.top, &shown, &recorded.worktree.base)?;
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
    recorded
        .worktree
        .project_branch
        .clone()
        .ok_or_else(|| Error::DetachedStart {
            job: recorded.id.to_string(),
            branch: recorded.id.branch(),
        })
}
