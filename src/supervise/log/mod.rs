//! A background job's output: its stdout and stderr share one pipe, which a thread of the supervisor
//! copies into `jobs/<id>/output.log`, rotating to `output.log.1` when the log reaches its cap, so
//! a job that writes without end fills at most twice the cap (and, while `logs -f` follows, the
//! files it has yet to read: generations.rs). The cap is `ISOLATE_LOG_MAX` (bytes, or with a K, M
//! or G suffix; default 64M).

mod generations;
mod pump;
mod size;
#[cfg(test)]
mod tests;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::thread::{self, JoinHandle};

use crate::error::{Error, Result};
use crate::sys::pipe::pipe;
use pump::{open_log, pump};

pub use generations::{successor, Following, Next};
pub use size::{max_from_env, MAX_VAR};

/// Bytes moved per read, and the pipe's size.
const CHUNK: usize = 256 << 10;

/// The writing end for the job (its stdout and stderr) and the thread filling the log.
pub struct Log {
    pub writer: OwnedFd,
    pump: Pump,
}

/// The thread that fills the log: not started until something is to write (so that the job's
/// fork is of a supervisor with no other thread: spawn/), then running.
enum Pump {
    Waiting {
        read: OwnedFd,
        file: std::fs::File,
        path: PathBuf,
        max: u64,
    },
    Running(JoinHandle<()>),
    /// Its start failed; nothing more is read.
    Gone,
}

impl Log {
    /// Creates `path` and the pipe for the job's output; `start` starts moving it into the log.
    pub fn open(path: &Path, max: u64) -> Result<Log> {
        let (read, write) = pipe().map_err(|e| Error::System("cannot create a pipe", e))?;
        // A bigger pipe means fewer wake-ups for a chatty job (best effort: the limit may be lower).
        // SAFETY: F_SETPIPE_SZ on a pipe we own.
        unsafe { libc::fcntl(write.as_raw_fd(), libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
        let file = open_log(path).map_err(|e| Error::io("cannot create the job's log", path, e))?;
        Ok(Log {
            writer: write,
            pump: Pump::Waiting {
                read,
                file,
                path: path.to_path_buf(),
                max,
            },
        })
    }

    /// Starts the thread that moves the output into the log, unless it runs already: before
    /// anything writes to `writer` (a setup command, the job once forked).
    pub fn start(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.pump, Pump::Gone) {
            Pump::Waiting {
                read,
                file,
                path,
                max,
            } => {
                let thread = thread::Builder::new()
                    .name("isolate-log".into())
                    .spawn(move || {
                        let _ = pump(read, file, &path, max);
                    })
                    .map_err(|e| Error::System("cannot start the job's log", e))?;
                self.pump = Pump::Running(thread);
            }
            started => self.pump = started,
        }
        Ok(())
    }

    /// Waits until every writer is gone (the job's tree has ended) and the log is complete.
    pub fn finish(self) {
        drop(self.writer);
        if let Pump::Running(thread) = self.pump {
            let _ = thread.join();
        }
    }
}
