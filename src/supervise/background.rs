//! `--bg`: the caller forks, the child starts a new session and forks again (so the supervisor is
//! no session leader and can never get a terminal), and the grandchild becomes the job's supervisor,
//! with no terminal and its own messages in `jobs/<id>/supervisor.log`. No daemon: each background
//! job has its own supervisor. The middle process stays as the supervisor's watchdog (`watch`). The
//! caller waits on a pipe until the supervisor reports that CMD has been exec'd (its running record)
//! or why it could not be, and exits accordingly.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

use nix::sys::wait::waitpid;
use nix::unistd::{fork, setsid, ForkResult, Pid};

use crate::error::{Error, Result};
use crate::job::record::Record;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::stop::{Processes, Stop, Tree};
use crate::sys::pipe;

/// Which side of the fork this process is on.
pub enum Role {
    /// The original caller: exit with this status.
    Caller(i32),
    /// The detached supervisor: report through this once CMD runs or cannot.
    Supervisor(Notify),
}

/// The supervisor's end of the pipe to the caller.
pub struct Notify(File);

impl Notify {
    /// CMD runs: hand the caller the running record.
    pub fn started(mut self, record: &Record) {
        let json = serde_json::to_string(record).unwrap_or_default();
        let _ = self.0.write_all(format!("R{json}").as_bytes());
    }

    /// CMD never ran: the caller exits with `status` and prints `message`.
    pub fn failed(mut self, status: i32, message: &str) {
        let byte = u8::try_from(status).unwrap_or(125);
        let _ = self.0.write_all(&[b'E', byte]);
        let _ = self.0.write_all(message.as_bytes());
    }
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
                Ok(ForkResult::Child) => Ok(Role::Supervisor(Notify(File::from(write)))),
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

/// The watchdog: the supervisor's parent, and a subreaper, so that a supervisor killed with SIGKILL
/// does not leave an unsupervised job: whatever of the job is left when the supervisor has ended
/// (re-parented here, or in the job's cgroup) is killed. After a normal end nothing is left.
fn watch(supervisor: Pid, job_id: &str) -> ! {
    loop {
        match waitpid(Pid::from_raw(-1), None) {
            Ok(status) if status.pid() == Some(supervisor) => break,
            Err(nix::errno::Errno::ECHILD) => break,
            _ => {}
        }
    }
    let cgroup = Cgroup::for_job(job_id);
    let tree = Tree {
        processes: Some(Processes::DescendantsOf(Pid::this())),
        cgroup: cgroup.as_ref(),
    };
    let mut stop = Stop::new(Duration::ZERO);
    while stop.round(&tree) > 0 {
        let _ = waitpid(Pid::from_raw(-1), None);
    }
    // SAFETY: ending the watchdog, which has nothing to flush.
    unsafe { libc::_exit(0) }
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

/// The caller's side: what the supervisor said, printed; the exit status.
fn hear(read: OwnedFd, json: bool) -> i32 {
    let mut said = Vec::new();
    let _ = File::from(read).read_to_end(&mut said);
    match said.split_first() {
        Some((b'R', record)) => {
            let text = String::from_utf8_lossy(record);
            if json {
                println!("{text}");
            } else {
                let id = serde_json::from_str::<Record>(&text)
                    .map(|r| r.id)
                    .unwrap_or_default();
                println!("{id}");
            }
            0
        }
        Some((b'E', rest)) => {
            let (status, message) = rest
                .split_first()
                .map_or((125, &[][..]), |(s, m)| (i32::from(*s), m));
            eprintln!("isolate: error: {}", String::from_utf8_lossy(message));
            status
        }
        _ => {
            eprintln!(
                "isolate: error: the background supervisor ended before it could start the job"
            );
            125
        }
    }
}
