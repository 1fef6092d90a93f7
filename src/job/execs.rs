//! The commands `isolate exec` runs in a job, on record beside it: each exec's supervisor registers
//! itself as `exec/<pid>-<start time>` in the job's directory while it runs, so that the job's own
//! end stops it first (it ends with the job), and so that no cleanup removes a worktree a command
//! still runs in. A name whose process is gone (or is another process now) is not live.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::sys::process::start_time;

const DIR: &str = "exec";

/// This process, on record as an exec of a job until dropped.
#[derive(Debug)]
pub struct Registration(PathBuf);

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Puts this process on record as an exec of the job whose directory is `job_dir`.
pub fn register(job_dir: &Path) -> Result<Registration> {
    let dir = job_dir.join(DIR);
    fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    let pid = std::process::id() as i32;
    let start = start_time(pid).ok_or_else(|| {
        Error::System(
            "cannot read this process's start time",
            std::io::Error::other("/proc"),
        )
    })?;
    let path = dir.join(format!("{pid}-{start}"));
    fs::File::create(&path).map_err(|e| Error::io("cannot create", &path, e))?;
    Ok(Registration(path))
}

/// The pids of the execs of the job at `job_dir` that still run.
pub fn live(job_dir: &Path) -> Vec<i32> {
    let Ok(entries) = fs::read_dir(job_dir.join(DIR)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let (pid, start) = name.split_once('-')?;
            let (pid, start): (i32, u64) = (pid.parse().ok()?, start.parse().ok()?);
            (pid > 0 && start_time(pid) == Some(start)).then_some(pid)
        })
        .collect()
}
