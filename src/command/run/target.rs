//! Where a `--worktree` job goes: the project found from the current directory, the commit its
//! worktree is cut from, and the directory its worktrees live in. Refused inside a job's own
//! worktree, before git runs there.

use std::fs;
use std::path::{Path, PathBuf};

use crate::config::{self, BaseSetting};
use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::git::remote::{self, Fetched};
use crate::job::worktrees;

use super::options::BaseChoice;

/// Where a `--worktree` job goes.
pub(super) struct Target {
    pub(super) project: Project,
    pub(super) base: String,
    /// The project's branch the caller is on (`main`), which `merge` and `sync` use.
    pub(super) project_branch: Option<String>,
    pub(super) config: config::Loaded,
    pub(super) root: PathBuf,
    pub(super) key_dir: PathBuf,
    /// What the base was fetched as (`--pr`, `fresh`), for the record and the start line.
    pub(super) fetched: Option<Fetch>,
}

/// A base fetched from the remote.
#[derive(Debug, Clone)]
pub(super) enum Fetch {
    PullRequest {
        number: u64,
        fetched: Fetched,
    },
    Fresh(Fetched),
    /// `fresh` could not be fetched, and the configuration lets it fall back to HEAD.
    FellBack(String),
}

/// What a queued `--worktree` job starts from, resolved when it is queued: the commit of the
/// caller's HEAD or of `--base REV` (a base fetched from the remote, `fresh` or `--pr`, is fetched
/// when the job starts: `None`), and the project branch the caller is on.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    pub(super) commit: Option<String>,
    pub(super) project_branch: Option<String>,
}

/// For a `--worktree` job about to be queued: what it will start from, as the caller has it now.
pub(super) fn resolve_now(cwd: &Path, state: &Path, base: &BaseChoice) -> Result<Resolved> {
    refuse_in_a_jobs_worktree(cwd, state)?;
    let project = Project::discover(cwd)?;
    let config = config::load(Some(&project))?;
    let fetched_later = match base {
        BaseChoice::Fresh | BaseChoice::PullRequest(_) => true,
        BaseChoice::Configured => config.config.base == Some(BaseSetting::Fresh),
        BaseChoice::Rev(_) => false,
    };
    let commit = match fetched_later {
        true => None,
        false => Some(base_commit(&project, &config.config, base)?.0),
    };
    Ok(Resolved {
        commit,
        project_branch: project.current_branch()?,
    })
}

/// For `--worktree`: the project, the base commit and the directory its worktrees go in; for a job
/// that waited in the queue, from what was `resolved` when it was queued.
pub(super) fn worktree_target(
    cwd: &Path,
    state: &Path,
    base: &BaseChoice,
    resolved: Option<&Resolved>,
) -> Result<Target> {
    refuse_in_a_jobs_worktree(cwd, state)?;
    let project = Project::discover(cwd)?;
    let config = config::load(Some(&project))?;
    let (base, fetched) = match resolved.and_then(|r| r.commit.as_deref()) {
        Some(commit) => (still_a_commit(&project, commit)?, None),
        None => base_commit(&project, &config.config, base)?,
    };
    let root = config.worktree_root(state, &project)?;
    let key_dir = root.join(project.key());
    let project_branch = match resolved {
        Some(r) => r.project_branch.clone(),
        None => project.current_branch()?,
    };
    Ok(Target {
        project,
        base,
        project_branch,
        config,
        root,
        key_dir,
        fetched,
    })
}

/// Refused before git runs here: a job's worktree is the job's to write, config included. Inside a
/// job, its own worktree is the project of the jobs it starts: this isolate runs in its sandbox,
/// with nothing of the user's that the job does not have.
fn refuse_in_a_jobs_worktree(cwd: &Path, state: &Path) -> Result<()> {
    match worktrees::of_another_job(cwd, state) {
        None => Ok(()),
        Some(written) => Err(Error::Usage(format!(
            "{written}; a job cannot start another job's worktree inside it: run the jobs side by \
             side from the project, or `isolate run --resume JOB` there (inside a job, jobs start \
             from that job's own worktree)"
        ))),
    }
}

/// The commit a queued job was given, still in the project when its turn comes.
fn still_a_commit(project: &Project, commit: &str) -> Result<String> {
    project.resolve_commit(commit)?.ok_or_else(|| {
        Error::Usage(format!(
            "the base {commit} the job was queued with is no longer a commit in {}",
            project.top.display()
        ))
    })
}

/// The commit the worktree is cut from, and how it was fetched when it was.
fn base_commit(
    project: &Project,
    config: &config::Config,
    choice: &BaseChoice,
) -> Result<(String, Option<Fetch>)> {
    let head = || {
        project
            .resolve_commit("HEAD")?
            .ok_or_else(|| Error::NoCommit(project.top.clone()))
    };
    match choice {
        BaseChoice::Rev(rev) => {
            let commit = project.resolve_commit(rev)?.ok_or_else(|| {
                Error::Usage(format!(
                    "--base {rev}: not a commit in {}",
                    project.top.display()
                ))
            })?;
            Ok((commit, None))
        }
        BaseChoice::PullRequest(pr) => {
            let fetched = remote::fetch_pull_request(project, pr)?;
            let start = Fetch::PullRequest {
                number: pr.number,
                fetched: fetched.clone(),
            };
            Ok((fetched.commit, Some(start)))
        }
        BaseChoice::Configured if config.base != Some(BaseSetting::Fresh) => Ok((head()?, None)),
        BaseChoice::Configured | BaseChoice::Fresh => match remote::fetch_default_branch(project) {
            Ok(fetched) => Ok((fetched.commit.clone(), Some(Fetch::Fresh(fetched)))),
            Err(e) if config.base_fallback == Some(BaseSetting::Head) => {
                Ok((head()?, Some(Fetch::FellBack(e.to_string()))))
            }
            Err(e) => Err(e),
        },
    }
}

/// Records the root of a worktree about to be made, when it is outside the state directory: as
/// configured and as it resolves now (a link on its way may be re-pointed later).
pub(super) fn register_root(state: &Path, root: &Path) -> Result<()> {
    let real = fs::canonicalize(root).map_err(|e| Error::io("cannot resolve", root, e))?;
    let state = fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf());
    crate::job::roots::register(&state, root)?;
    crate::job::roots::register(&state, &real)
}
