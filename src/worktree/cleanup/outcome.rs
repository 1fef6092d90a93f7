//! What settling does to a worktree and its branch (or did), and why: the one reading of a verdict
//! that `prune --dry-run`, `prune`, `rm` and `worktrees` print. Never acts on it.

use serde::Serialize;

use super::decide::Verdict;
use super::ending::{Ending, Stay};
use super::facts::{Branch, Facts, Tree};
use super::fate::branch_fate;
use super::job::Job;

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
            let fate = branch_fate(job, facts, *delete_branch);
            let branch = fate.action();
            let tree = match facts.tree {
                Tree::Present(_) => "clean",
                Tree::Missing => "worktree directory is missing",
                Tree::Removed => "worktree removed when the job ended",
            };
            // A removed worktree whose branch stays has nothing left to remove: it is kept, for
            // its branch.
            let action = match (&facts.tree, branch) {
                (Tree::Removed | Tree::Missing, Some(BranchAction::Keep)) => Action::Keep,
                _ => Action::Remove,
            };
            Outcome {
                action,
                branch,
                reason: match fate.action() {
                    None => tree.to_string(),
                    Some(_) => format!("{tree}; {fate}"),
                },
            }
        }
    }
}

/// The outcome `planned` once carried out as `ending` says: a removal that failed keeps all, and a
/// branch that moved before its deletion stays.
pub fn carried_out(planned: Outcome, ending: &Ending, facts: &Facts) -> Outcome {
    match ending {
        Ending::Kept(stay @ Stay::Unremovable(_)) => Outcome {
            action: Action::Keep,
            branch: planned.branch.map(|_| BranchAction::Keep),
            reason: stay.to_string(),
        },
        _ if planned.branch == Some(BranchAction::Delete) && ending.branch_kept(facts) => Outcome {
            branch: Some(BranchAction::Keep),
            reason: format!("{}; the branch moved, kept", planned.reason),
            ..planned
        },
        _ => planned,
    }
}
