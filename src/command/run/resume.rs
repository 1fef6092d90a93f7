//! `--resume JOB`: the kept worktree of an ended job, same id, same branch, under the job's own
//! policy (another `--policy` can only narrow it: both are enforced, stacked). A resume lock keeps
//! two resumes from sharing the worktree.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::job::record::{Record, State, WorktreeReport};
use crate::job::store;
use crate::sandbox::made::Made;
use crate::sandbox::{plan, policy};
use crate::worktree::create::Created;
use crate::worktree::inspect::CheckedOut;

use super::allow_write::check_allow_write;
use super::detect::{detect, executable};
use super::options::RunOptions;
use super::prepared::{Chosen, JobWorktree, Prepared};
use super::resume_lock::ResumeLock;

/// The ended job, and what it runs under now.
struct Resumed {
    id: JobId,
    job_dir: PathBuf,
    record: Record,
    worktree: WorktreeReport,
    policy: policy::Loaded,
    narrowing: Option<policy::Loaded>,
}

pub(super) fn prepare_resume(query: &str, options: &RunOptions) -> Result<Prepared> {
    let state = store::state_dir()?;
    let (job_dir, record) = store::resolve(&state, query)?;
    match record.effective_state() {
        now @ (State::Queued | State::Running) => {
            return Err(Error::Job {
                job: record.id.to_string(),
                why: format!("is {now}; wait for it or stop it"),
            })
        }
        State::Lost => {
            return Err(Error::Job {
                job: record.id.to_string(),
                why: "was lost (its supervisor died); settle it with isolate rm or prune first"
                    .into(),
            })
        }
        _ => {}
    }
    let id = JobId::parse(&record.id).ok_or_else(|| Error::InvalidRecordId(query.to_string()))?;
    let worktree = record
        .worktree
        .clone()
        .filter(|wt| !wt.removed && Path::new(&wt.path).is_dir())
        .ok_or_else(|| Error::Job {
            job: id.to_string(),
            why: "has no kept worktree to resume".into(),
        })?;
    // What runs in the job's worktree runs under the job's policy; another --policy can only narrow
    // it (both are enforced, stacked).
    let policy = crate::command::recorded_policy(&record)?;
    let narrowing = match options.policy.as_deref() {
        Some(name) => Some(policy::load(name)?).filter(|p| p.reference != policy.reference),
        None => None,
    };
    if options.sandboxed {
        plan::check_kernel(&policy)?;
        if let Some(extra) = &narrowing {
            plan::check_kernel(extra)?;
        }
    }
    let lock = ResumeLock::take(&job_dir, id.as_str())?;
    let resumed = Resumed {
        id,
        job_dir,
        record,
        worktree,
        policy,
        narrowing,
    };
    let prepared = take(options, &state, resumed)?;
    // `Prepared` releases it when the job ends, or when it is dropped before.
    lock.hand_over();
    Ok(prepared)
}

/// The kept worktree taken up again: a fresh TMPDIR, and what CMD is (never an installation from
/// the job's own worktree, the project or the worktrees).
fn take(options: &RunOptions, state: &Path, resumed: Resumed) -> Result<Prepared> {
    let wt = &resumed.worktree;
    let project = Project::discover(Path::new(&wt.repo))?;
    let path = PathBuf::from(&wt.path);
    let key_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let root = key_dir.parent().unwrap_or(&key_dir).to_path_buf();
    check_allow_write(&options.allow_write, state, Some(&project), &root, true)?;
    let tmpdir = resumed.job_dir.join("tmp");
    // What a run before left of it (a job's tree too deep for an older isolate to remove).
    match crate::sys::remove::remove_tree(&tmpdir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io("cannot remove the job's old TMPDIR", &tmpdir, e))
        }
        _ => {}
    }
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&tmpdir)
        .and_then(|()| {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(tmpdir.join("run"))
        })
        .map_err(|e| Error::io("cannot create the job's TMPDIR", &tmpdir, e))?;
    let created = Created {
        path: path.clone(),
        branch: wt.branch.clone(),
        base: wt.base.clone(),
        dispatch_dirty: false,
        included: Default::default(),
        filtered: Default::default(),
        project_branch: wt.project_branch.clone(),
        pull_request: wt.pull_request,
        started_from: wt.started_from.clone(),
        // Noted when the worktree was made; not again.
        checked_out: CheckedOut::Unknown,
        // What a job left there, whatever the project vouched for.
        vouched: false,
    };
    let found = executable(&options.command, &path);
    let agent = detect(found.as_deref(), &[&path, &project.top]);
    let executable = found.filter(|exe| {
        [&path, &project.top, &root].iter().all(|dir| {
            !exe.starts_with(fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
        })
    });
    Ok(Prepared {
        id: resumed.id,
        job_dir: resumed.job_dir,
        tmpdir,
        cwd: path,
        policy: resumed.policy,
        narrowing: resumed.narrowing,
        worktree: Some(JobWorktree {
            project,
            created,
            key_dir,
        }),
        resumed: Some(resumed.record),
        setup: None,
        chosen: Chosen::Recorded,
        executable,
        agent,
        made: Made::default(),
        owned_elsewhere: false,
        queued_at: None,
    })
}
