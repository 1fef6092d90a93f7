//! Where isolate last left the project's branch of a job, noted in the job's record directory, so
//! that a branch someone else moved is never overwritten. Never trusts a note that is not an id.

use std::path::Path;

use super::job::Job;
use crate::job::store;

/// In the job directory: the tip isolate last set the project's branch to.
const BRANCH_TIP: &str = "branch-tip";

/// Notes that isolate set the project's branch of the job in `job_dir` to `tip`.
pub fn note_import(job_dir: &Path, tip: &str) {
    let _ = store::write_atomic(&job_dir.join(BRANCH_TIP), tip.as_bytes());
}

/// Where isolate last left the project's branch: the last tip it imported, else base.
pub(super) fn last_import(job: &Job) -> String {
    std::fs::read_to_string(job.job_dir.join(BRANCH_TIP))
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| t.len() >= 40 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        .unwrap_or_else(|| job.base.to_string())
}
