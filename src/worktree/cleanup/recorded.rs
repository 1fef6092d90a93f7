//! A job's worktree as its record names it, with the record's claims checked against what isolate
//! computes itself. Never takes the worktree's place from the record unchecked.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::facts::{Life, Settling};
use super::job::Job;
use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::job::record::State;
use crate::job::store;

/// A job's worktree as its record names it, with what the record says checked against what isolate
/// computes itself (the project from the record's repository, the worktree directory from the
/// configuration): `rm`, `prune`, `import`, `merge`, `sync` and `worktrees` start here.
pub struct Recorded {
    pub project: Project,
    pub id: JobId,
    pub key_dir: PathBuf,
    pub job_dir: PathBuf,
    pub worktree: crate::job::record::WorktreeReport,
    /// What loads the job's policy again.
    pub policy: Option<String>,
    pub life: Life,
}

/// The projects a listing of many jobs found, each once: every kept worktree of one project names
/// the same repository, and finding it is two git processes.
#[derive(Debug, Default)]
pub struct Projects(HashMap<String, Project>);

impl Projects {
    /// The project of the repository a record names, as `Project::discover` finds it.
    fn discover(&mut self, repo: &str) -> Result<Project> {
        if let Some(project) = self.0.get(repo) {
            return Ok(project.clone());
        }
        let project = Project::discover(Path::new(repo))?;
        self.0.insert(repo.to_string(), project.clone());
        Ok(project)
    }
}

impl Recorded {
    pub fn open(state: &Path, record: &crate::job::record::Record) -> Result<Recorded> {
        Recorded::open_among(state, record, &mut Projects::default())
    }

    /// `open`, asking `projects` for the project, which keeps what it found for the next job.
    pub fn open_among(
        state: &Path,
        record: &crate::job::record::Record,
        projects: &mut Projects,
    ) -> Result<Recorded> {
        let worktree = record.worktree.clone().ok_or_else(|| Error::NoWorktree {
            job: record.id.clone(),
        })?;
        let id = JobId::parse(&record.id).ok_or_else(|| Error::NotAJobId {
            id: record.id.clone(),
        })?;
        let project = projects.discover(&worktree.repo)?;
        // Where the worktree must be, computed from the project and configuration, never taken
        // from the record.
        let key_dir = crate::config::load(Some(&project))?
            .worktree_root(state, &project)?
            .join(project.key());
        let job_dir = if record.forgotten {
            store::forgotten_dir(state)
        } else {
            store::jobs_dir(state)
        }
        .join(id.as_str());
        Ok(Recorded {
            project,
            id,
            key_dir,
            job_dir,
            worktree,
            policy: record.sandbox.policy_ref.clone(),
            life: match record.effective_state() {
                // A queued job has no worktree yet: whatever is there is not for this rule to touch.
                State::Queued | State::Running => Life::Running,
                State::Lost => Life::Lost,
                State::Exited { .. }
                | State::Failed { .. }
                | State::Killed { .. }
                | State::TimedOut { .. }
                | State::OutOfMemory { .. } => Life::Ended,
            },
        })
    }

    /// The job's worktree, to be settled by `settling`.
    pub fn job(&self, settling: Settling) -> Job<'_> {
        Job {
            project: &self.project,
            id: &self.id,
            key_dir: &self.key_dir,
            path: Path::new(&self.worktree.path),
            base: &self.worktree.base,
            job_dir: &self.job_dir,
            life: self.life,
            removed: self.worktree.removed,
            settling,
            dispatch_dirty: self.worktree.dispatch_dirty,
            project_branch: self.worktree.project_branch.as_deref(),
            pull_request: self.worktree.pull_request,
            started_from: self.worktree.started_from.as_deref(),
            policy: self.policy.as_deref(),
        }
    }

    /// The record's worktree path, once checked: the one isolate would have made for this job.
    pub fn checked_path(&self) -> Result<&Path> {
        let path = Path::new(&self.worktree.path);
        if path != self.key_dir.join(self.id.as_str()) {
            return Err(Error::MisplacedWorktree {
                job: self.id.to_string(),
                path: path.to_path_buf(),
            });
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::scratch::repo_with_one_commit;

    #[test]
    fn a_listing_finds_each_project_once() {
        let (tmp, top) = repo_with_one_commit();
        let repo = top.display().to_string();
        let mut projects = Projects::default();
        let first = projects.discover(&repo).unwrap();
        // Moved away: only what the listing found still answers for the path.
        std::fs::rename(&top, tmp.path().join("moved")).unwrap();
        assert!(Project::discover(&top).is_err());
        let again = projects.discover(&repo).unwrap();
        assert_eq!((again.top, again.git_dir), (first.top, first.git_dir));
        // Another listing looks again.
        assert!(Projects::default().discover(&repo).is_err());
    }
}
