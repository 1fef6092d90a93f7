//! Settling a job's worktree: import, decide, and carry out the decision, deleting only what it
//! allows, after a second look right before deleting when the import took time. Never deletes on a
//! verdict taken before an import that copied objects.

use super::decide::Verdict;
use super::ending::{Ending, Gone, Stay};
use super::facts::{Branch, Facts, Tree};
use super::fate::branch_fate;
use super::gather::gather;
use super::import_lock::import_lock;
use super::job::{Job, Look};
use super::keep::Keep;
use super::outcome::{carried_out, outcome, Outcome};
use super::report::report;
use super::survey::judge;
use crate::error::Result;
use crate::git;
use crate::git::transaction::Started;
use crate::job::record::WorktreeReport;
use crate::sys::remove;
use crate::worktree::create::pin_ref;

/// A settled worktree: the worktree part of the job's report, and what was done.
pub struct Settled {
    pub report: WorktreeReport,
    pub outcome: Outcome,
}

/// Imports, decides, and carries out the decision.
pub fn settle(job: &Job) -> Result<Settled> {
    let _lock = import_lock(job.job_dir)?;
    let (facts, verdict) = look(job);
    let ending = carry_out(job, &facts, &verdict);
    let contained = contained(job, &facts, &ending);
    let outcome = carried_out(outcome(job, &facts, &verdict), &ending, &facts);
    Ok(Settled {
        report: report(job, &facts, &ending, contained),
        outcome,
    })
}

/// The facts, imported first, and the verdict on them; when the import took a while, decided
/// again on a fresh read, immediately before deleting.
fn look(job: &Job) -> (Facts, Verdict) {
    let facts = gather(job, Look::Import);
    let verdict = judge(job, &facts);
    if !(matches!(verdict, Verdict::Remove { .. }) && facts.copied) {
        return (facts, verdict);
    }
    let mut again = gather(job, Look::Import);
    again.copied = true;
    // What the first look's import brought home is what this ending brought.
    again.outside.copied += facts.outside.copied;
    let verdict = if judge(job, &again) != verdict {
        Verdict::Keep(Keep::Changed)
    } else {
        verdict
    };
    (again, verdict)
}

/// The verdict carried out: the worktree removed, then its base pin and (when the verdict says so
/// and it is still where the job left it) its branch deleted.
fn carry_out(job: &Job, facts: &Facts, verdict: &Verdict) -> Ending {
    let delete_branch = match verdict {
        Verdict::Keep(keep) => return Ending::Kept(Stay::Verdict(keep.clone())),
        Verdict::Remove { delete_branch } => *delete_branch,
    };
    let tip = facts.branch_after.as_deref().filter(|_| delete_branch);
    // Without a branch in the project, nothing is deleted, not even the pin.
    let deletes = !matches!(facts.branch, Branch::Gone);
    // The refs' git started while the tree is removed, its changes queued; locked, checked and
    // committed only once the tree is gone, as before; aborted (nothing locked) if it cannot be.
    let instructions = deletes.then(|| instructions(job, facts.pin.is_some(), tip));
    let started = instructions
        .as_ref()
        .filter(|(both, _, _)| !both.is_empty())
        .and_then(|(both, _, _)| git::transaction::start(&job.project.top, both));
    let tree = match facts.tree {
        Tree::Present(_) => match remove::remove_tree(job.path) {
            Ok(()) => Gone::Clean,
            // `started`, dropped, aborts: nothing of the project changes.
            Err(e) => return Ending::Kept(Stay::Unremovable(e.to_string())),
        },
        Tree::Missing => Gone::Missing,
        Tree::Removed => Gone::Removed,
    };
    // Not started or not committed: the slow path, as before (the transaction, then one by one).
    let committed = started.map(Started::commit);
    let branch_kept = match (instructions, committed) {
        (None, _) => false,
        (Some((_, _, with_branch)), Some(true)) => !with_branch,
        (Some(_), _) => !delete_refs(job, facts.pin.is_some(), tip),
    };
    Ending::Gone {
        tree,
        fate: branch_fate(job, facts, !branch_kept),
    }
}

/// Whether the project branch the job started from has the commits of its kept branch already.
fn contained(job: &Job, facts: &Facts, ending: &Ending) -> bool {
    ending.branch_kept(facts)
        && facts.branch.commits() > 0
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
        }
}

/// The refs' deletions: the base pin (when there is one) if it still points at base, the branch
/// when `tip` names the value it must still have; the pin's line alone; whether the branch is in.
fn instructions(job: &Job, pin: bool, tip: Option<&str>) -> (String, String, bool) {
    let pin = if pin {
        format!("delete {} {}\n", pin_ref(job.id), job.base)
    } else {
        String::new()
    };
    match tip {
        Some(tip) => {
            let head = format!("delete refs/heads/{} {tip}\n", job.id.branch());
            (format!("{pin}{head}"), pin, true)
        }
        None => (pin.clone(), pin, false),
    }
}

/// Deletes the base pin (when there is one) if it still points at base, and the branch when `tip`
/// names the value it must still have: both in one transaction, or one by one if that fails.
/// Returns whether the branch was deleted. (The slow path, when the prepared transaction was not.)
fn delete_refs(job: &Job, pin: bool, tip: Option<&str>) -> bool {
    let (both, pin, with_branch) = instructions(job, pin, tip);
    let run = |stdin: &str| {
        stdin.is_empty()
            || git::run_with_input(
                &job.project.top,
                ["update-ref", "--stdin"],
                stdin.as_bytes(),
            )
            .is_ok()
    };
    if !with_branch {
        run(&pin);
        return false;
    }
    if run(&both) {
        return true;
    }
    run(&pin);
    let head = both.strip_prefix(pin.as_str()).unwrap_or(&both);
    run(head)
}
