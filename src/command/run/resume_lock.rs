//! The resume lock of an ended job's kept worktree (`jobs/<id>/resume.lock`, made with an
//! exclusive create): one `--resume` or `exec` at a time works in it. Removed when dropped, unless
//! handed over to the job `run` prepares, which releases it at its end (`Prepared`).

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The lock's name in the job's directory.
pub(super) const RESUME_LOCK: &str = "resume.lock";

/// The resume lock, held.
pub(super) struct ResumeLock(Option<PathBuf>);

impl ResumeLock {
    /// Takes the lock of job `id` (in `job_dir`); refused while someone holds it.
    pub(super) fn take(job_dir: &Path, id: &str) -> Result<ResumeLock> {
        let path = job_dir.join(RESUME_LOCK);
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|_| Error::Job {
                job: id.to_string(),
                why: format!("is being resumed already ({})", path.display()),
            })?;
        Ok(ResumeLock(Some(path)))
    }

    /// Left in place: whoever now holds the job releases it.
    pub(super) fn hand_over(mut self) {
        self.0 = None;
    }
}

impl Drop for ResumeLock {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}
