//! The job's record as `run` keeps it, and every write of it: while the worktree is made
//! (`creating`), before anything of the job runs (`starting`), once CMD runs, and at the end. A
//! supervisor killed at any point leaves a record that reads as `lost` and names what it was doing.
//! The first and the last are written durably; the two between are states passed through, whole
//! but not waited for (`store::write_passing_record`).

use std::path::Path;

use crate::command::report_error;
use crate::error::Result;
use crate::job::id::JobId;
use crate::job::record::{Record, SandboxReport, State, WorktreeReport};
use crate::job::store;

use super::options::RunOptions;
use super::prepared::Prepared;
use super::target::Target;

/// On record from the start: the record of a job whose worktree (at `path`) is being made.
pub(super) fn creating(
    options: &RunOptions,
    prepared: &Prepared,
    t: &Target,
    path: &Path,
) -> Result<()> {
    let (id, policy) = (&prepared.id, &prepared.policy);
    let sandbox = SandboxReport {
        enforced: options.sandboxed,
        tier: None,
        landlock_abi: None,
        policy: policy.name.clone(),
        policy_ref: Some(policy.reference.clone()),
        gaps: Vec::new(),
        allow_write: Vec::new(),
        refused: None,
    };
    let mut worktree = pending_worktree(path, &id.branch(), &t.base, &t.project.top);
    worktree.project_branch = t.project_branch.clone();
    worktree.reason = "creating the worktree".into();
    let mut record = record(options, id, options.display_name(), sandbox, Some(worktree));
    record.cwd = prepared.cwd.display().to_string();
    record.background = options.background();
    record.queued_at = prepared.queued_at.clone();
    store::write_record(&prepared.job_dir, &record)
}

/// The record of a job the queue holds, before anything of it is made: `queued`, or `running` when
/// it takes a slot at once (so that it counts from that moment). Its sandbox is decided when it
/// starts: the policy named is `--policy`'s, if any.
pub(super) fn queued(options: &RunOptions, id: &JobId, cwd: &Path, state: State) -> Record {
    let sandbox = SandboxReport {
        enforced: options.sandboxed,
        tier: None,
        landlock_abi: None,
        policy: options.policy.clone().unwrap_or_default(),
        policy_ref: None,
        gaps: Vec::new(),
        allow_write: Vec::new(),
        refused: None,
    };
    let mut record = record(options, id, options.display_name(), sandbox, None);
    record.cwd = cwd.display().to_string();
    record.background = true;
    record.set_state(state);
    record
}

/// The record of a job this process supervises, as it starts.
pub(super) fn running(
    options: &RunOptions,
    prepared: &Prepared,
    sandbox: SandboxReport,
    worktree: Option<WorktreeReport>,
) -> Record {
    let name = match &prepared.resumed {
        Some(old) => old.name.clone(),
        None => options.display_name(),
    };
    let mut record = record(options, &prepared.id, name, sandbox, worktree);
    record.cwd = prepared.cwd.display().to_string();
    record.queued_at = prepared.queued_at.clone();
    record
}

fn record(
    options: &RunOptions,
    id: &JobId,
    name: Option<String>,
    sandbox: SandboxReport,
    worktree: Option<WorktreeReport>,
) -> Record {
    let command = options.command.clone();
    Record::new(
        id.to_string(),
        name,
        command,
        sandbox,
        String::new(),
        worktree,
    )
}

/// On record before anything of the job runs (its setup included): a supervisor killed before it
/// could write the job's pid leaves a lost job whose record names the cgroup that holds what was
/// started.
pub(super) fn starting(prepared: &Prepared, record: &Record) {
    let mut starting = record.clone();
    if let Some(wt) = starting.worktree.as_mut() {
        wt.reason = match prepared.setup {
            Some(_) => "running the project's setup".into(),
            None => "starting".into(),
        };
    }
    let _ = store::write_passing_record(&prepared.job_dir, &starting);
}

/// The record once CMD runs: a state passed through, as `starting`; a failure is said, and the
/// job goes on.
pub(super) fn write_running(prepared: &Prepared, record: &Record) {
    if let Err(e) = store::write_passing_record(&prepared.job_dir, record) {
        report_error(&e);
    }
}

/// The record at the end, durably: a failure is said.
pub(super) fn write(prepared: &Prepared, record: &Record) {
    if let Err(e) = store::write_record(&prepared.job_dir, record) {
        report_error(&e);
    }
}

/// The worktree part of a running job's record: where it is; the outcome comes at the end.
pub(super) fn pending_worktree(
    path: &Path,
    branch: &str,
    base: &str,
    repo: &Path,
) -> WorktreeReport {
    WorktreeReport {
        path: path.display().to_string(),
        branch: branch.to_string(),
        base: base.to_string(),
        repo: repo.display().to_string(),
        commits: 0,
        dirty: Default::default(),
        stash: 0,
        other_refs: Vec::new(),
        in_progress: Vec::new(),
        ignored: 0,
        dispatch_dirty: false,
        removed: false,
        branch_kept: true,
        reason: "running".into(),
        handoff: None,
        branch_tip: None,
        project_branch: None,
        pull_request: None,
        started_from: None,
        nested_jobs: Vec::new(),
        outside_git: Vec::new(),
        lfs_imported: 0,
        push: None,
    }
}
