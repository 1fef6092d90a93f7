//! The job's record as `run` writes it: while the worktree is made, as the job starts, and the
//! worktree part before the outcome is known.

use std::path::Path;
use std::time::SystemTime;

use crate::cli::RunArgs;
use crate::job::record::{Record, State, WorktreeReport, SCHEMA};

use super::prepare::{Prepared, Target};

/// The record of a job whose worktree is being made.
pub(super) fn creating(args: &RunArgs, prepared: &Prepared, t: &Target, path: &Path) -> Record {
    let sandbox = crate::job::record::SandboxReport {
        enforced: !args.no_sandbox,
        landlock_abi: None,
        policy: prepared.policy.name.clone(),
        policy_ref: Some(prepared.policy.reference.clone()),
        gaps: Vec::new(),
        allow_write: Vec::new(),
        refused: None,
    };
    let mut worktree = pending_worktree(path, &prepared.id.branch(), &t.base, &t.project.top);
    worktree.project_branch = t.project_branch.clone();
    worktree.reason = "creating the worktree".into();
    let mut record = running_record(args, prepared, sandbox, Some(worktree));
    record.background = args.bg;
    record
}

/// The record of a job this process supervises, as it starts.
pub(super) fn running_record(
    args: &RunArgs,
    prepared: &Prepared,
    sandbox: crate::job::record::SandboxReport,
    worktree: Option<WorktreeReport>,
) -> Record {
    let me = std::process::id() as i32;
    Record {
        schema: SCHEMA,
        id: prepared.id.to_string(),
        name: match &prepared.resumed {
            Some(old) => old.name.clone(),
            None => args.name.as_ref().map(|n| n.to_string_lossy().into_owned()),
        },
        command: args.command.clone(),
        state: State::Running,
        pid: None,
        supervisor_pid: me,
        supervisor_start: crate::sys::process::start_time(me).unwrap_or(0),
        started_at: timestamp(SystemTime::now()),
        ended_at: None,
        exit: None,
        sandbox,
        cwd: prepared.cwd.display().to_string(),
        worktree,
        log: None,
        port: None,
        cgroup: None,
        background: false,
        forgotten: false,
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
    }
}

pub(super) fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}
