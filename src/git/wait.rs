//! The bounded wait for a project-side git: its output read to the end on threads of their own, the
//! child waited for through its pidfd, killed past the limit. Never waits unbounded.

use std::io::Read;
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::Duration;

use super::run::{describe, Output};
use crate::error::{Error, Result};
use crate::sys::pidfd::{self, PidFd};

/// Long enough for pack-objects and checkout of a large repository on a slow disk.
pub const TIMEOUT: Duration = Duration::from_secs(600);

/// The most a git call may print on either stream: a diff of a job's tree of billions of paths (a
/// few KiB of objects naming one subtree again and again) would print without end.
pub const MAX_OUTPUT: u64 = 256 << 20;

/// Reads a spawned child's stdout and stderr to the end and waits for it, killing it after `timeout`.
/// A stream over `MAX_OUTPUT` is closed (the child ends on a broken pipe) and the call fails.
pub fn collect(child: &mut Child, cmd: &Command, timeout: Duration) -> Result<Output> {
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(MAX_OUTPUT + 1).read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
    let status = wait(child, cmd, timeout)?;
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    if [&stdout, &stderr]
        .iter()
        .any(|b| b.len() as u64 > MAX_OUTPUT)
    {
        return Err(Error::Git {
            args: describe(cmd),
            code: None,
            stderr: format!("its output went over {MAX_OUTPUT} bytes, and it was stopped"),
        });
    }
    Ok(Output {
        stdout,
        stderr,
        status,
    })
}

/// Waits for `child` (started from `cmd`), killing it after `timeout`. The wait blocks on a pidfd
/// (readable when the child exits), so a git call costs what git costs, not a polling interval.
pub fn wait(child: &mut Child, cmd: &Command, timeout: Duration) -> Result<ExitStatus> {
    let failed_with = |stderr: String| Error::Git {
        args: describe(cmd),
        code: None,
        stderr,
    };
    let pidfd = PidFd::open(child.id() as i32, 0).ok();
    let mut failed = None;
    let status = pidfd::wait_exit(
        pidfd.as_ref(),
        timeout,
        Duration::from_millis(1),
        || match child.try_wait() {
            Ok(Some(status)) => Some(Some(status)),
            Ok(None) => None,
            Err(e) => {
                failed = Some(e.to_string());
                Some(None)
            }
        },
    );
    match (status, failed) {
        (_, Some(error)) => Err(failed_with(error)),
        (Some(Some(status)), None) => Ok(status),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            Err(failed_with(format!(
                "timed out after {}",
                humantime::format_duration(timeout)
            )))
        }
    }
}
