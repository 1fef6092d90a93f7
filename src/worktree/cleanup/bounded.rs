//! A read of the job's repository, confined and bounded in time: on a thread of its own that may
//! read nothing but the worktree and the project's repository (Landlock), given up on after
//! `INSPECT_LIMIT`. A job that is still running can swap what was checked before the read (a ref
//! for a link to a FIFO or `/dev/zero` elsewhere): the open then fails instead of blocking forever
//! or reading without end.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::sandbox::landlock::confine_thread_to_reading;
use crate::words::clipped;
use crate::worktree::checked_out;
use crate::worktree::inspect::{self, InspectError, Inspection};

/// How long a read of the job's repository may take. Past this, the probe has not decided, and
/// so it keeps (a file the read cannot reach, a FIFO among them, fails at once: see above).
const INSPECT_LIMIT: Duration = Duration::from_secs(120);
/// The most characters of a read's error kept.
const MESSAGE: usize = 1_000;

/// `inspect` of the job's worktree at `path`, confined and bounded; `job_dir` is the job's record
/// directory, where the end of the worktree's checkout is noted.
pub fn inspect_bounded(
    path: &Path,
    branch: &str,
    project: &Project,
    job_dir: &Path,
) -> Result<Inspection> {
    let branch = branch.to_string();
    let checked_out = checked_out::noted(job_dir);
    // The user's own rules, read here: the confined thread reads only what the job may have written;
    // and those the job's policy added, as noted in its record directory.
    let trusted = inspect::ProjectExcludes::read(&project.git_dir)
        .and(crate::worktree::policy_ignores::noted(job_dir));
    read_bounded(path, project, move |path| {
        inspect::inspect(path, &branch, &trusted, checked_out)
    })
}

/// The tip of the job's branch alone (`inspect::branch_tip`), confined and bounded as
/// `inspect_bounded` is: what is imported when the whole inspection failed.
pub(super) fn branch_tip_bounded(
    path: &Path,
    branch: &str,
    project: &Project,
) -> Result<Option<String>> {
    let branch = branch.to_string();
    read_bounded(path, project, move |path| {
        inspect::branch_tip(path, &branch)
    })
}

/// `read(path)` on a thread of its own that may read only beneath `path` (the job's worktree) and
/// the project's stores, given up on after `INSPECT_LIMIT` (the thread is then left blocked; the
/// process exits soon after).
pub(super) fn read_bounded<T, F>(path: &Path, project: &Project, read: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&Path) -> std::result::Result<T, InspectError> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let owned = path.to_path_buf();
    let mut roots: Vec<PathBuf> = vec![owned.clone()];
    roots.extend(project.stores());
    thread::spawn(move || {
        let done = match confine_thread_to_reading(roots) {
            // What gix says of an unreadable file can quote all of it: at most a few lines kept.
            Ok(_) => read(&owned).map_err(|e| match e {
                InspectError::Untrusted { reason, .. } => Error::InspectUntrusted {
                    path: owned.clone(),
                    reason: clipped(&reason, MESSAGE),
                },
                e => Error::Inspect {
                    path: owned.clone(),
                    source: clipped(&e.to_string(), MESSAGE).into(),
                },
            }),
            Err(e) => Err(e),
        };
        let _ = tx.send(done);
    });
    rx.recv_timeout(INSPECT_LIMIT).unwrap_or_else(|_| {
        Err(Error::InspectTimedOut {
            path: path.to_path_buf(),
            limit: INSPECT_LIMIT,
        })
    })
}
