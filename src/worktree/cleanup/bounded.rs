//! A read of the job's repository bounded in time: the job can make a read block forever. Never
//! waits past `INSPECT_LIMIT`.

use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::worktree::inspect::{self, Inspection};

/// How long a read of the job's repository may take. The job could have swapped a file there for a
/// FIFO that blocks a reader forever; past this, the probe has not decided, and so it keeps.
const INSPECT_LIMIT: Duration = Duration::from_secs(120);

/// `inspect` on a thread of its own, given up on after `INSPECT_LIMIT` (the thread is left blocked;
/// the supervisor exits soon after).
pub fn inspect_bounded(path: &Path, branch: &str) -> Result<Inspection> {
    let (tx, rx) = mpsc::channel();
    let (owned, branch) = (path.to_path_buf(), branch.to_string());
    thread::spawn(move || {
        let _ = tx.send(
            inspect::inspect(&owned, &branch).map_err(|e| Error::Inspect {
                path: owned.clone(),
                source: Box::new(e),
            }),
        );
    });
    rx.recv_timeout(INSPECT_LIMIT).unwrap_or_else(|_| {
        Err(Error::InspectTimedOut {
            path: path.to_path_buf(),
            limit: INSPECT_LIMIT,
        })
    })
}
