//! Where a `--worktree` job goes: the project found from the current directory, the commit its
//! worktree is cut from, and the directory its worktrees live in. Refused inside a job's own
//! worktree, before git runs there.

use std::fs;
use std::path::{Path, PathBuf};

use crate::config;
use crate::error::{Error, Result};
use crate::git::project::Project;

/// Where a `--worktree` job goes.
pub(super) struct Target {
    pub(super) project: Project,
    pub(super) base: String,
    /// The project's branch the caller is on (`main`), which `merge` and `sync` use.
    pub(super) project_branch: Option<String>,
    pub(super) config: config::Loaded,
    pub(super) root: PathBuf,
    pub(super) key_dir: PathBuf,
}

/// For `--worktree`: the project, the base commit and the directory its worktrees go in.
pub(super) fn worktree_target(cwd: &Path, state: &Path, base: Option<&str>) -> Result<Target> {
    // Refused before git runs here: a job's worktree is the job's to write, config included.
    if let Some(top) = job_worktree(cwd, state) {
        return Err(Error::Usage(format!(
            "{} is the worktree of an isolate job; a job cannot start another job's worktree inside it \
             (use `isolate run --resume JOB` from the project)",
            top.display()
        )));
    }
    let project = Project::discover(cwd)?;
    let base = match base {
        Some(rev) => project.resolve_commit(rev)?.ok_or_else(|| {
            Error::Usage(format!(
                "--base {rev}: not a commit in {}",
                project.top.display()
            ))
        })?,
        None => project
            .resolve_commit("HEAD")?
            .ok_or_else(|| Error::NoCommit(project.top.clone()))?,
    };
    let config = config::load(Some(&project))?;
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
    })
}

/// The top of the job worktree `dir` is in, if it is one: a repository whose config carries
/// isolate's `[isolate]` mark, or a directory under the state's worktrees. Read as text: nothing
/// runs there.
pub(super) fn job_worktree(dir: &Path, state: &Path) -> Option<PathBuf> {
    if let (Ok(dir), Ok(root)) = (
        fs::canonicalize(dir),
        fs::canonicalize(state.join("worktrees")),
    ) {
        if dir.starts_with(&root) {
            return Some(dir);
        }
    }
    crate::git::mark::marked_top(dir)
}
