//! `isolate sync JOB`: the project branch into a job's kept worktree, sandboxed; pending work there
//! is committed first as a checkpoint. The project is never touched.

use std::path::Path;

use crate::cli::ImportArgs;
use crate::error::{Error, Result};
use crate::git;
use crate::job::record::State;
use crate::job::store;
use crate::sandbox::policy::Loaded;
use crate::worktree::cleanup::Recorded;
use crate::worktree::project::Project;
use crate::worktree::sandboxed;

pub fn run(args: ImportArgs) -> Result<i32> {
    sync(&args)?;
    Ok(0)
}

fn sync(args: &ImportArgs) -> Result<()> {
    let state = store::state_dir()?;
    let (_, record) = store::resolve(&state, &args.job)?;
    if matches!(record.effective_state(), State::Running | State::Lost) {
        return Err(Error::Refused(format!(
            "job {} is {:?}: sync an ended job's kept worktree",
            record.id,
            record.effective_state()
        )));
    }
    let recorded = Recorded::open(&state, &record)?;
    let path = recorded.checked_path()?.to_path_buf();
    if !path.is_dir() {
        return Err(Error::Refused(format!(
            "job {} has no kept worktree",
            record.id
        )));
    }
    let target = recorded.worktree.project_branch.clone().ok_or_else(|| {
        Error::Refused(format!(
            "job {} started on a detached HEAD: no project branch to sync",
            record.id
        ))
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
        return Err(Error::Refused(format!(
            "merging {target} conflicts in {}; resolve them in {}",
            conflicts.stdout.lines().collect::<Vec<_>>().join(", "),
            path.display()
        )));
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
        return Err(Error::Other(format!(
            "git status in the worktree failed: {}",
            status.stderr.trim()
        )));
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
            return Err(Error::Other(format!(
                "checkpoint failed: {}",
                out.stderr.trim()
            )));
        }
    }
    Ok(true)
}
