//! THE predicate of docs/worktrees.md ("When a job ends"): the verdict over the facts, in one place.
//! It reads the facts and nothing else: never a file, never git.

use super::facts::{Branch, Facts, Life, Settling, Tree};
use super::keep::{Keep, Unmerged};
use super::work::Work;
use crate::error::Error;

/// What happens to the worktree and to the project's branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The worktree stays as it is; so does the branch.
    Keep(Keep),
    /// What is there of the worktree goes, and its base pin; the branch too when `delete_branch`
    /// (it has no commits of its own, or, for `rm` and `prune`, the project branch has them).
    Remove { delete_branch: bool },
}

/// The predicate. Order matters: running, in use, gone, not readable, import failed, work in the
/// tree, --keep, clean.
pub fn decide(facts: &Facts) -> Verdict {
    match facts.life {
        Life::Running => return Verdict::Keep(Keep::Running),
        Life::Lost => return Verdict::Keep(Keep::Lost),
        Life::Ended => {}
    }
    if facts.in_use {
        return Verdict::Keep(Keep::InUse);
    }
    let insp = match &facts.tree {
        Tree::Missing | Tree::Removed => {
            return Verdict::Remove {
                delete_branch: branch_goes(facts),
            }
        }
        Tree::Present(Err(Error::InspectUntrusted { reason, .. })) => {
            return Verdict::Keep(Keep::Untrusted(reason.clone()))
        }
        Tree::Present(Err(why)) => return Verdict::Keep(Keep::Unreadable(why.to_string())),
        Tree::Present(Ok(insp)) => insp,
    };
    if let Branch::Unknown(why) = &facts.branch {
        return Verdict::Keep(Keep::ImportFailed(why.clone()));
    }
    let work = Work::of(insp, &facts.unimported, &facts.outside.lacking);
    if !work.is_empty() {
        return Verdict::Keep(Keep::Work(work));
    }
    if facts.settling == (Settling::End { keep: true }) {
        return Verdict::Keep(Keep::Asked);
    }
    if facts.settling == Settling::Prune && !branch_goes(facts) {
        return Verdict::Keep(match &facts.branch_held {
            Some(held) => Keep::BranchHeld(held.clone()),
            None => Keep::Unmerged(unmerged(facts)),
        });
    }
    Verdict::Remove {
        delete_branch: branch_goes(facts),
    }
}

/// A branch at base goes; so does, for `rm` and `prune`, one the project branch has all of (unless
/// its commits were imported just now: what is new in the project is never settled in the same
/// step, so that a dry run predicts it).
fn branch_goes(facts: &Facts) -> bool {
    if facts.branch_held.is_some() {
        return false;
    }
    match &facts.branch {
        Branch::AtBase => true,
        Branch::Commits {
            standing: Some(standing),
            ..
        } => facts.settling.settles_landed() && !facts.copied && standing.landed(),
        _ => false,
    }
}

/// Why `prune` keeps a worktree for its branch.
fn unmerged(facts: &Facts) -> Unmerged {
    match &facts.branch {
        Branch::ToImport => Unmerged::ToImport,
        Branch::Commits {
            standing: Some(standing),
            ..
        } if !standing.landed() => Unmerged::Commits(standing.unmerged),
        Branch::Commits { .. } if facts.copied => Unmerged::JustImported,
        _ => Unmerged::NoProjectBranch,
    }
}
