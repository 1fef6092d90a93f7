//! What settling does to a worktree and its branch (or did), and why: the one reading of a verdict
//! that `prune --dry-run`, `prune`, `rm` and `worktrees` print. Never acts on it.

use serde::Serialize;

use super::decide::Verdict;
use super::facts::{Branch, Facts, Tree};
use super::job::Job;
use super::keep::plural;

/// What settling does to a worktree (or did), as `prune`, `rm` and `worktrees` say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The worktree (what is there of it) and the job's record go.
    Remove,
    Keep,
}

/// What settling does to the job's branch in the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchAction {
    Delete,
    Keep,
}

/// The verdict as it is carried out: what happens to the worktree and to the branch, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub action: Action,
    /// `None` when the project has no branch for the job.
    pub branch: Option<BranchAction>,
    pub reason: String,
}

/// The outcome `verdict` gives over `facts`: the one reading of a decision that `prune --dry-run`,
/// `prune`, `rm` and `worktrees` all print.
pub fn outcome(job: &Job, facts: &Facts, verdict: &Verdict) -> Outcome {
    let has_branch = !matches!(facts.branch, Branch::Gone);
    match verdict {
        Verdict::Keep(keep) => Outcome {
            action: Action::Keep,
            branch: has_branch.then_some(BranchAction::Keep),
            reason: keep.to_string(),
        },
        Verdict::Remove { delete_branch } => {
            let branch = has_branch.then_some(if *delete_branch {
                BranchAction::Delete
            } else {
                BranchAction::Keep
            });
            let tree = match facts.tree {
                Tree::Present(_) => "clean",
                Tree::Missing => "worktree directory is missing",
                Tree::Removed => "worktree removed when the job ended",
            };
            let fate = branch_fate(job, facts, *delete_branch);
            // A removed worktree whose branch stays has nothing left to remove: it is kept, for
            // its branch.
            let action = match (&facts.tree, branch) {
                (Tree::Removed | Tree::Missing, Some(BranchAction::Keep)) => Action::Keep,
                _ => Action::Remove,
            };
            Outcome {
                action,
                branch,
                reason: if fate.is_empty() {
                    tree.to_string()
                } else {
                    format!("{tree}; {fate}")
                },
            }
        }
    }
}

/// What becomes of the job's branch, in words ("branch kept: 2 commits not in main").
pub fn branch_fate(job: &Job, facts: &Facts, delete_branch: bool) -> String {
    let target = job.project_branch.unwrap_or("the project branch");
    match (&facts.branch, delete_branch) {
        (Branch::Gone, _) => String::new(),
        (_, false) if facts.branch_held.is_some() => format!(
            "branch kept: {}",
            facts.branch_held.as_deref().unwrap_or_default()
        ),
        (Branch::AtBase, true) => "branch deleted: no commits".into(),
        (_, true) => format!("branch deleted: its commits are in {target}"),
        (Branch::AtBase, false) => "branch kept: no commits".into(),
        (Branch::ToImport, false) => "branch kept: commits to import".into(),
        (Branch::Unknown(why), false) => format!("branch kept: {why}"),
        (
            Branch::Commits {
                standing: Some(standing),
                ..
            },
            false,
        ) if !standing.landed() => format!(
            "branch kept: {} commit{} not in {target}",
            standing.unmerged,
            plural(standing.unmerged)
        ),
        (Branch::Commits { .. }, false) if facts.copied => {
            "branch kept: its commits were imported just now".into()
        }
        (Branch::Commits { count, .. }, false) => {
            format!("branch kept: {count} commit{} beyond base", plural(*count))
        }
    }
}
