//! `isolate sync JOB`: the project branch into a job's kept worktree, sandboxed; pending work there
//! is committed first as a checkpoint. The project is never touched.

use std::path::Path;

use crate::cli::ImportArgs;
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::store;
use crate::sandbox::policy::Loaded;
use crate::worktree::cleanup::Recorded;
use crate::worktree::sandboxed;

pub fn run(args: ImportArgs) -> Result<i32> {
    sync(&args)?;
    Ok(0)
}

fn sync(args: &ImportArgs) -> Result<()> {
    let state = store::state_dir()?;
    let (_, record) = store::resolve(&state, &args.job)?;
    let now = record.effective_state();
    if !now.ended() {
        return Err(Error::Job {
            job: record.id.to_string(),
            why: format!("is {now}: sync an ended job's kept worktree"),
        });
    }
    let recorded = Recorded::open(&state, &record)?;
    let path = recorded.checked_path()?.to_path_buf();
    if !path.is_dir() {
        return Err(Error::Job {
            job: record.id.to_string(),
            why: "has no kept worktree".into(),
        });
    }
    let target = recorded
        .worktree
        .project_branch
        .clone()
        .ok_or_else(|| Error::Job {
            job: record.id.to_string(),
            why: "started on a detached HEAD: no project branch to sync".into(),
        })?;
    let project = &recorded.project;
    let policy = crate::command::recorded_policy(&record)?;
    let tip = git::run(
        &project.top,
        [
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("refs/heads/{target}"),
        ],
    )?
    .text();
    // Pending work first, as a checkpoint commit of its own.
    if checkpoint(project, &path, &policy)? {
        out!("committed pending work as a checkpoint")?;
    }
    let merged = sandboxed::git(project, &path, &policy, &["merge", "--no-edit", &tip])?;
    if merged.status != 0 {
        let conflicts = sandboxed::git(
            project,
            &path,
            &policy,
            &["diff", "--name-only", "--diff-filter=U"],
        )?;
        let files: Vec<String> = conflicts.stdout.lines().map(str::to_owned).collect();
        // A merge that stopped short of conflicts (a filter driver that failed, a file in the
        // way) is git's failure, told in git's words.
        if files.is_empty() {
            return Err(Error::WorktreeGit {
                what: "the merge in the worktree failed",
                stderr: merged.stderr.trim().to_string(),
            });
        }
        return Err(Error::Conflict {
            into: target,
            files,
            worktree: path,
        });
    }
    out!(
        "{target} ({}) merged into {}",
        &tip[..12],
        recorded.id.branch()
    )?;
    Ok(())
}

/// Commits the worktree's pending work (sandboxed, hooks off); true when there was some.
fn checkpoint(project: &Project, path: &Path, policy: &Loaded) -> Result<bool> {
    let status = sandboxed::git(project, path, policy, &["status", "--porcelain"])?;
    if status.status != 0 {
        return Err(Error::WorktreeGit {
            what: "git status in the worktree failed",
            stderr: status.stderr.trim().to_string(),
        });
    }
    if status.stdout.trim().is_empty() {
        return Ok(false);
    }
    for args in [
        vec!["add", "--all"],
        vec![
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            "isolate: checkpoint before sync",
        ],
    ] {
        let out = sandboxed::git(project, path, policy, &args)?;
        if out.status != 0 {
            return Err(Error::WorktreeGit {
                what: "checkpoint failed",
                stderr: out.stderr.trim().to_string(),
            });
        }
    }
    Ok(true)
}
