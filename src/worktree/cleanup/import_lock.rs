//! The lock that serialises one job's imports, and `isolate import`'s import under it. Never imports
//! without it.

use std::path::Path;

use super::facts::Branch;
use super::gather::gather;
use super::job::{Job, Look};
use crate::error::{Error, Result};
use crate::sys::lock::Lock;

/// The lock that serialises one job's imports (`isolate import`, `merge`, the supervisor's end).
pub(super) fn import_lock(job_dir: &Path) -> Result<Lock> {
    Lock::exclusive(&job_dir.join("import.lock"))
}

/// `isolate import JOB`: the job's current commits onto the project's `isolate/<id>` now (also
/// while it runs). Returns the commits beyond base.
pub fn import_now(job: &Job) -> Result<usize> {
    let _lock = import_lock(job.job_dir)?;
    match gather(job, Look::Import).branch {
        Branch::Unknown(why) => Err(Error::NothingImported {
            job: job.id.to_string(),
            why,
        }),
        branch => Ok(branch.commits()),
    }
}
