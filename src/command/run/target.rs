//! Where a `--worktree` job goes: the project found from the current directory, the commit its
//! worktree is cut from, and the directory its worktrees live in. Refused inside a job's own
//! worktree, before git runs there.

use std::fs;
use std::path::{Path, PathBuf};

use crate::config::{self, BaseSetting};
use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::git::remote::{self, Fetched};

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
    if let Some(top) = job_worktree(cwd, state) {
        if !is_outer_worktree(&top) {
            return Err(Error::Usage(format!(
                "{} is the worktree of an isolate job; a job cannot start another job's worktree \
                 inside it: run the jobs side by side from the project, or `isolate run --resume \
                 JOB` there (inside a job, jobs start from that job's own worktree)",
                top.display()
            )));
        }
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

/// `top` is the worktree of the job this isolate runs inside (job/nest.rs).
fn is_outer_worktree(top: &Path) -> bool {
    crate::job::nest::outer()
        .and_then(|outer| outer.worktree.as_deref())
        .and_then(|worktree| fs::canonicalize(worktree).ok())
        .is_some_and(|worktree| fs::canonicalize(top).is_ok_and(|top| top == worktree))
}

/// The top of the job worktree `dir` is in, if it is one: a directory under the state directory
/// (its worktrees, the jobs' TMPDIRs), a worktree on record (one under a `worktree_root` of the
/// user's choosing), or a repository whose config carries isolate's `[isolate]` mark (which the
/// job can remove: the record is what counts). Read as text: nothing runs there.
///
/// The records are read only when `dir` is under a worktree root outside the state directory that
/// a job's worktree was made under (job/roots.rs), or when those roots are not known yet.
pub(super) fn job_worktree(dir: &Path, state: &Path) -> Option<PathBuf> {
    use crate::job::{roots, store};
    let dir = fs::canonicalize(dir).ok()?;
    let state = fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf());
    if dir.starts_with(&state) {
        return Some(dir);
    }
    let known = roots::known(&state);
    // Each root as it resolves now: one moved since, or reached through a link re-pointed since,
    // is where its worktrees are now.
    let under_a_root = |roots: &[PathBuf]| {
        roots.iter().any(|root| {
            let now = fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            dir.starts_with(now)
        })
    };
    let on_record = match &known {
        Some(roots) if !under_a_root(roots) => None,
        _ => {
            let worktrees: Vec<PathBuf> = store::list_all(&state)
                .into_iter()
                .filter_map(|(_, record)| record.worktree)
                .map(|wt| PathBuf::from(wt.path))
                .collect();
            if known.is_none() {
                let _ = roots::fill(&state, worktrees.iter().map(PathBuf::as_path));
            }
            worktrees
                .into_iter()
                .filter_map(|wt| fs::canonicalize(wt).ok())
                .find(|tree| dir.starts_with(tree))
        }
    };
    on_record.or_else(|| crate::git::mark::marked_top(&dir))
}

/// Records the root of a worktree about to be made, when it is outside the state directory: as
/// configured and as it resolves now (a link on its way may be re-pointed later).
pub(super) fn register_root(state: &Path, root: &Path) -> Result<()> {
    let real = fs::canonicalize(root).map_err(|e| Error::io("cannot resolve", root, e))?;
    let state = fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf());
    crate::job::roots::register(&state, root)?;
    crate::job::roots::register(&state, &real)
}
