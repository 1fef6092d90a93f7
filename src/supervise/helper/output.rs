//! A helper whose output is wanted: its stdout and stderr go to pipes read by a thread each while
//! it runs (a full pipe would stall it), and come back as text with its status. It never leaves a
//! reader behind: both threads end when the helper's tree, the last holder of the pipes, is gone.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::thread;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::supervise::helper::Helper;
use crate::supervise::spawn::{Spawn, Stdio};
use crate::sys::pipe::pipe;

/// What the command printed, and its status (128+N for signal N).
pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `job` (its stdout and stderr replaced by pipes) as a helper named `what`, for at most
/// `limit`, and returns what it printed.
pub fn output(mut job: Spawn, what: &str, limit: Duration) -> Result<Output> {
    let cannot = |e| Error::System("cannot create a pipe", e);
    let (out_read, out_write) = pipe().map_err(cannot)?;
    let (err_read, err_write) = pipe().map_err(cannot)?;
    job.stdout = Stdio::from(out_write);
    job.stderr = Stdio::from(err_write);
    let helper = Helper::start(job, what)?;
    let stdout = reader(out_read);
    let stderr = reader(err_read);
    let status = helper.finish(limit);
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn reader(fd: OwnedFd) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        let _ = std::fs::File::from(fd).read_to_string(&mut text);
        text
    })
}
