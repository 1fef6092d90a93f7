//! Settling a job's worktree: import, decide, and carry out the decision, deleting only what it
//! allows, after a second look right before deleting when the import took time. Never deletes on a
//! verdict taken before an import that copied objects.

use std::path::Path;

use super::decide::Verdict;
use super::facts::{Branch, Tree};
use super::gather::gather;
use super::import_lock::import_lock;
use super::job::{Job, Look};
use super::keep::Keep;
use super::outcome::{branch_fate, outcome, Action, BranchAction, Outcome};
use super::survey::judge;
use crate::controls::shell_quote;
use crate::error::Result;
use crate::git;
use crate::job::record::{Dirty, WorktreeReport};
use crate::worktree::create::pin_ref;
use crate::worktree::remove;

/// A settled worktree: the worktree part of the job's report, and what was done.
pub struct Settled {
    pub report: WorktreeReport,
    pub outcome: Outcome,
}

/// Imports, decides, and carries out the decision.
pub fn settle(job: &Job) -> Result<Settled> {
    let _lock = import_lock(job.job_dir)?;
    let branch = job.id.branch();
    let mut facts = gather(job, Look::Import);
    let mut verdict = judge(job, &facts);
    if matches!(verdict, Verdict::Remove { .. }) && facts.copied {
        // The import took a while: decide again on a fresh read, immediately before deleting.
        let mut again = gather(job, Look::Import);
        again.copied = true;
        if judge(job, &again) != verdict {
            verdict = Verdict::Keep(Keep::Changed);
        }
        facts = again;
    }

    let exists = matches!(facts.tree, Tree::Present(_));
    let mut outcome = outcome(job, &facts, &verdict);
    let mut failed = None;
    let mut removed = false;
    let mut branch_kept = !matches!(facts.branch, Branch::Gone);
    let ignored = match &facts.tree {
        Tree::Present(Ok(insp)) => insp.ignored,
        _ => 0,
    };
    let mut reason = match (&verdict, &facts.tree) {
        (Verdict::Keep(keep), _) => format!("kept: {keep}"),
        (Verdict::Remove { .. }, Tree::Missing) => "worktree directory is missing".to_string(),
        (Verdict::Remove { .. }, Tree::Removed) => "worktree removed".to_string(),
        (Verdict::Remove { .. }, Tree::Present(_)) => "clean".to_string(),
    };
    let commits = facts.branch.commits();
    if let Verdict::Remove { delete_branch } = verdict {
        if exists {
            match remove::remove_tree(job.path) {
                Ok(()) => removed = true,
                Err(e) => {
                    reason = format!("kept: cannot remove the worktree: {e}");
                    failed = Some(reason.clone());
                }
            }
        }
        if removed || !exists {
            let tip = facts.branch_after.as_deref().filter(|_| delete_branch);
            branch_kept = branch_kept && !delete_refs(job, facts.pin.is_some(), tip);
            let fate = branch_fate(job, &facts, !branch_kept);
            if !fate.is_empty() {
                reason = format!("{reason}; {fate}");
            }
        }
    }
    let insp = match &facts.tree {
        Tree::Present(Ok(insp)) => Some(insp),
        _ => None,
    };
    // Whether the project branch the job started from has its commits already.
    let contained = branch_kept
        && commits > 0
        && match (&facts.branch, job.project_branch, &facts.branch_after) {
            (
                Branch::Commits {
                    standing: Some(standing),
                    ..
                },
                _,
                _,
            ) => standing.landed(),
            (_, Some(target), Some(tip)) => git::try_run(
                &job.project.top,
                [
                    "merge-base",
                    "--is-ancestor",
                    "--end-of-options",
                    tip,
                    &format!("refs/heads/{target}"),
                ],
            )
            .is_ok_and(|out| out.status.success()),
            _ => false,
        };
    if contained {
        reason = format!(
            "{reason}; already in {}",
            job.project_branch.unwrap_or_default()
        );
    }
    // A kept worktree is the job's: git there runs whatever the job planted (hooks, fsmonitor), so
    // the way back in is another sandboxed session, not a plain `cd`.
    let handoff = if !removed && exists {
        let policy = job
            .policy
            .map(|p| format!(" --policy {}", shell_quote(Path::new(p))))
            .unwrap_or_default();
        Some(format!(
            "isolate run --resume {}{policy} -- \"$SHELL\"",
            job.id
        ))
    } else if branch_kept && commits > 0 && !contained {
        Some(format!(
            "git -C {} merge --no-ff {branch}",
            shell_quote(&job.project.top)
        ))
    } else {
        None
    };
    if let Some(why) = failed {
        outcome = Outcome {
            action: Action::Keep,
            branch: outcome.branch.map(|_| BranchAction::Keep),
            reason: why,
        };
    } else if outcome.branch == Some(BranchAction::Delete) && branch_kept {
        outcome.branch = Some(BranchAction::Keep);
        outcome.reason = format!("{}; the branch moved, kept", outcome.reason);
    }
    let report = WorktreeReport {
        path: job.path.display().to_string(),
        branch,
        base: job.base.to_string(),
        repo: job.project.top.display().to_string(),
        commits,
        dirty: Dirty {
            modified: insp.map_or(0, |i| i.modified),
            untracked: insp.map_or(0, |i| i.untracked),
            conflicted: insp.map_or(0, |i| i.conflicted),
        },
        stash: insp.map_or(0, |i| i.stash_entries),
        other_refs: facts.unimported.clone(),
        in_progress: insp.map_or_else(Vec::new, |i| {
            i.in_progress.iter().map(|s| s.to_string()).collect()
        }),
        ignored: if removed { ignored } else { 0 },
        dispatch_dirty: job.dispatch_dirty,
        removed: removed || (!exists && matches!(verdict, Verdict::Remove { .. })),
        branch_kept,
        reason,
        handoff,
        branch_tip: if branch_kept {
            facts.branch_after.clone()
        } else {
            None
        },
        project_branch: job.project_branch.map(str::to_string),
    };
    Ok(Settled { report, outcome })
}

/// Deletes the base pin (when there is one) if it still points at base, and the branch when `tip`
/// names the value it must still have: both in one transaction, or one by one if that fails.
/// Returns whether the branch was deleted.
fn delete_refs(job: &Job, pin: bool, tip: Option<&str>) -> bool {
    let pin = if pin {
        format!("delete {} {}\n", pin_ref(job.id), job.base)
    } else {
        String::new()
    };
    let run = |stdin: &str| {
        stdin.is_empty()
            || git::run_with_input(
                &job.project.top,
                ["update-ref", "--stdin"],
                stdin.as_bytes(),
            )
            .is_ok()
    };
    let Some(tip) = tip else {
        run(&pin);
        return false;
    };
    let head = format!("delete refs/heads/{} {tip}\n", job.id.branch());
    if run(&format!("{pin}{head}")) {
        return true;
    }
    run(&pin);
    run(&head)
}
