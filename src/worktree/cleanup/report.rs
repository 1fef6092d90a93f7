//! THE boundary between the settled worktree and the job's record: the worktree part of the report
//! (its `reason` words, its `removed` and `branch_kept` flags, the handoff) read off the `Ending`,
//! in one place. Never decides and never acts: the schema is the record's (`job::record`).

use std::path::Path;

use super::ending::{Ending, Gone};
use super::facts::{Facts, Tree};
use super::job::Job;
use crate::controls::shell_quote;
use crate::job::record::{Dirty, WorktreeReport};

/// The worktree part of the job's report. `contained`: the project branch the job started from
/// has its commits already.
pub(super) fn report(job: &Job, facts: &Facts, ending: &Ending, contained: bool) -> WorktreeReport {
    let insp = match &facts.tree {
        Tree::Present(Ok(insp)) => Some(insp),
        _ => None,
    };
    let branch_kept = ending.branch_kept(facts);
    let reason = if contained {
        format!(
            "{ending}; already in {}",
            job.project_branch.unwrap_or_default()
        )
    } else {
        ending.to_string()
    };
    // Only a worktree removed now had its ignored files counted away with it.
    let removed_now = matches!(
        ending,
        Ending::Gone {
            tree: Gone::Clean,
            ..
        }
    );
    WorktreeReport {
        path: job.path.display().to_string(),
        branch: job.id.branch(),
        base: job.base.to_string(),
        repo: job.project.top.display().to_string(),
        commits: facts.branch.commits(),
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
        ignored: match insp {
            Some(insp) if removed_now => insp.ignored,
            _ => 0,
        },
        dispatch_dirty: job.dispatch_dirty,
        removed: ending.removed(),
        branch_kept,
        reason,
        handoff: handoff(job, facts, ending, contained),
        branch_tip: if branch_kept {
            facts.branch_after.clone()
        } else {
            None
        },
        project_branch: job.project_branch.map(str::to_string),
        pull_request: job.pull_request,
        started_from: job.started_from.map(str::to_string),
        nested_jobs: insp.map_or_else(Vec::new, |i| i.nested_jobs.clone()),
        outside_git: facts.outside.lacking.clone(),
        lfs_imported: facts.outside.copied,
        push: None,
    }
}

/// The way back to the job's work. A kept worktree is the job's: git there runs whatever the job
/// planted (hooks, fsmonitor), so the way back in is another sandboxed session, not a plain `cd`.
fn handoff(job: &Job, facts: &Facts, ending: &Ending, contained: bool) -> Option<String> {
    let exists = matches!(facts.tree, Tree::Present(_));
    if matches!(ending, Ending::Kept(_)) && exists {
        let policy = job
            .policy
            .map(|p| format!(" --policy {}", shell_quote(Path::new(p))))
            .unwrap_or_default();
        Some(format!(
            "isolate run --resume {}{policy} -- \"$SHELL\"",
            job.id
        ))
    } else if ending.branch_kept(facts) && facts.branch.commits() > 0 && !contained {
        Some(format!(
            "git -C {} merge --no-ff {}",
            shell_quote(&job.project.top),
            job.id.branch()
        ))
    } else {
        None
    }
}
