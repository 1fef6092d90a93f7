//! What `run` made before CMD starts, owned by one value that undoes it when dropped before the job
//! started: the job's record directory and TMPDIR, its fresh worktree and branch, the paths its
//! policy created. A resumed job's worktree, refs and record are the ended job's: only what this
//! run added (TMPDIR, the resume lock) is undone. A job that waited in the queue keeps its record
//! directory, where its waiter writes that it never ran.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use crate::git::project::Project;
use crate::job::id::JobId;
use crate::job::record::Record;
use crate::job::store;
use crate::sandbox::made::Made;
use crate::sandbox::{agent, policy};
use crate::worktree::create::{self, Created};

use super::resume_lock::RESUME_LOCK;

/// A job's worktree as `run` holds it.
pub(super) struct JobWorktree {
    pub(super) project: Project,
    pub(super) created: Created,
    /// The directory of the project's worktrees (`<root>/<project key>`).
    pub(super) key_dir: PathBuf,
}

/// Why a job runs under its policy.
#[derive(Debug, Clone)]
pub(super) enum Chosen {
    /// `--policy`.
    Given,
    /// The project's `.isolate.toml` (or the user's configuration).
    Configured,
    /// CMD is a known agent (`Prepared::agent`): its profile.
    Agent,
    /// `--resume`: the job's own.
    Recorded,
    Default,
}

/// Everything made before CMD starts.
pub(super) struct Prepared {
    pub(super) id: JobId,
    pub(super) job_dir: PathBuf,
    pub(super) tmpdir: PathBuf,
    pub(super) cwd: PathBuf,
    pub(super) policy: policy::Loaded,
    /// `--resume` with a --policy other than the job's: the job is held to both.
    pub(super) narrowing: Option<policy::Loaded>,
    pub(super) worktree: Option<JobWorktree>,
    /// `--resume`: the ended job's record; its worktree, refs and record are never undone.
    pub(super) resumed: Option<Record>,
    /// The project's setup command, for a fresh worktree.
    pub(super) setup: Option<String>,
    /// Why the job runs under its policy.
    pub(super) chosen: Chosen,
    /// CMD's real executable, when it resolves (PATH looked up, symlinks followed).
    pub(super) executable: Option<PathBuf>,
    /// The agent CMD is, whatever policy it runs under (for the hint at the end).
    pub(super) agent: Option<agent::Detected>,
    /// What the plan made for the policy (undone with the rest).
    pub(super) made: Made,
    /// Set once CMD runs (or another process owns the job): nothing is undone any more.
    pub(super) owned_elsewhere: bool,
    /// When the job entered the queue, for one that waited there. Its job directory is then never
    /// undone: its waiter records how it ended instead (queued.rs).
    pub(super) queued_at: Option<String>,
}

impl Prepared {
    /// The job's time limit: `--timeout`, else the shorter of its policies' timeouts.
    pub(super) fn timeout(&self, given: Option<Duration>) -> Option<Duration> {
        let policies = std::iter::once(&self.policy).chain(&self.narrowing);
        given.or(policies.filter_map(|p| p.policy.limits.timeout).min())
    }

    /// CMD runs, or the background supervisor has the job: from here its worktree is the job's,
    /// settled by the end-of-job rule, never undone.
    pub(super) fn disown(&mut self) {
        self.owned_elsewhere = true;
    }

    /// After the job: its TMPDIR goes (before the final record says the job ended), however deep
    /// the job made it (sys/remove/); what could not go is said.
    pub(super) fn remove_tmpdir(&self) {
        if let Err(e) = crate::sys::remove::remove_tree(&self.tmpdir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                say!("isolate: warning: the job's TMPDIR was not removed: {e}");
            }
        }
    }

    /// After the final record: a resumed job may be resumed again.
    pub(super) fn release_resume_lock(&self) {
        if self.resumed.is_some() {
            let _ = fs::remove_file(self.job_dir.join(RESUME_LOCK));
        }
    }

    fn undo(&self) {
        self.made.undo();
        if self.resumed.is_some() {
            self.remove_tmpdir();
            self.release_resume_lock();
            return;
        }
        if let Some(wt) = &self.worktree {
            create::undo(&wt.project, &self.id, &wt.created.path, &wt.created.base);
        }
        match self.queued_at {
            Some(_) => self.remove_tmpdir(),
            None => {
                let _ = store::forget(&self.job_dir);
            }
        }
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if !self.owned_elsewhere {
            self.undo();
        }
    }
}
