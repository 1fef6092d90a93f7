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

/// For `--worktree`: the project, the base commit and the directory its worktrees go in.
pub(super) fn worktree_target(cwd: &Path, state: &Path, base: &BaseChoice) -> Result<Target> {
    // Refused before git runs here: a job's worktree is the job's to write, config included. Inside
    // a job, its own worktree is the project of the jobs it starts: this isolate runs in its
    // sandbox, with nothing of the user's that the job does not have.
    if let Some(written) = worktrees::of_another_job(cwd, state) {
        return Err(Error::Usage(format!(
            "{written}; a job cannot start another job's worktree inside it: run the jobs side by \
             side from the project, or `isolate run --resume JOB` there (inside a job, jobs start \
             from that job's own worktree)"
        )));
    }
    let project = Project::discover(cwd)?;
    let config = config::load(Some(&project))?;
    let (base, fetched) = base_commit(&project, &config.config, base)?;
    let root = config.worktree_root(state, &project)?;
    let key_dir = root.join(project.key());
    let project_branch = project.current_branch()?;
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
