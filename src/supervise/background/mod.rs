//! `--bg`: the caller forks, the child starts a new session and forks again (so the supervisor is
//! no session leader and can never get a terminal), and the grandchild becomes the job's supervisor,
//! with no terminal and its own messages in `jobs/<id>/supervisor.log`. No daemon: each background
//! job has its own supervisor. The middle process stays as the supervisor's watchdog (`watch`). The
//! caller waits on a pipe until the supervisor reports that CMD has been exec'd (its running record),
//! that the job waits in the queue (its queued record), or why it could not be, and exits
//! accordingly.

mod watchdog;
mod word;

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

use nix::unistd::{fork, setsid, ForkResult};

use crate::error::{Error, Result};
use crate::sys::pipe;
use watchdog::watch;
use word::hear;

pub use word::Notify;

/// Which side of the fork this process is on.
pub enum Role {
    /// The original caller: exit with this status.
    Caller(i32),
    /// The detached supervisor: report through this once CMD runs or cannot.
    Supervisor(Notify),
}

/// Detaches. In the caller, waits for the supervisor's word and prints the id (or the record as JSON).
pub fn detach(job_dir: &Path, job_id: &str, json: bool) -> Result<Role> {
    let (read, write) = pipe::pipe().map_err(|e| Error::System("cannot create a pipe", e))?;
    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(job_dir.join("supervisor.log"))
        .map_err(|e| Error::io("cannot create", job_dir.join("supervisor.log"), e))?;
    // SAFETY: the caller is single-threaded here (no thread of isolate's is alive before the job
    // starts), so the child may go on running ordinary code.
    match unsafe { fork() }.map_err(|e| Error::System("cannot fork", e.into()))? {
        ForkResult::Parent { .. } => {
            // The child lives on as the supervisor's watchdog; init reaps it once this process exits.
            drop(write);
            Ok(Role::Caller(hear(read, json)))
        }
        ForkResult::Child => {
            drop(read);
            let _ = setsid();
            redirect(&log);
            // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only changes where orphans are re-parented.
            unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
            // SAFETY: as above, single-threaded.
            match unsafe { fork() } {
                Ok(ForkResult::Child) => Ok(Role::Supervisor(Notify(Some(File::from(write))))),
                Ok(ForkResult::Parent { child }) => {
                    drop(write);
                    watch(child, job_id)
                }
                // SAFETY: _exit ends this first child (the second fork failed) without running destructors.
                Err(_) => unsafe { libc::_exit(125) },
            }
        }
    }
}

/// stdin from /dev/null, stdout and stderr to the supervisor's log.
fn redirect(log: &File) {
    if let Ok(null) = File::open("/dev/null") {
        // SAFETY: dup2 onto the standard descriptors of this process.
        unsafe { libc::dup2(null.as_raw_fd(), 0) };
    }
    // SAFETY: as above.
    unsafe {
        libc::dup2(log.as_raw_fd(), 1);
        libc::dup2(log.as_raw_fd(), 2);
    }
}
