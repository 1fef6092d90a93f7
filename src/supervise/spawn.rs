//! Starting the job: fork (from the main thread, which lives as long as the supervisor, because the
//! parent-death signal follows the forking *thread*), a new session, the parent-death signal, then
//! exec of the pre-exec helper (sandbox/exec.rs), which restricts itself and execs CMD. The call
//! returns only once CMD itself has been exec'd, or with the reason it could not be; with the
//! seccomp layer, the helper's notification descriptor arrives on the same socket and the broker
//! (broker.rs) answers on it from then on.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

use crate::error::{Error, Result};
use crate::sandbox::exec::{self, NOT_EXECUTABLE, NOT_FOUND, PLAN_VAR};
use crate::sandbox::handover;
use crate::sandbox::plan::{Plan, Rules};
use crate::supervise::broker::{Broker, Pending};
use crate::supervise::pty;
use crate::sys::pipe;

/// What to start.
pub struct Spawn {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// The complete environment of CMD.
    pub env: Vec<(OsString, OsString)>,
    pub rules: Option<Rules>,
    /// CMD's standard streams (inherited by default).
    pub stdin: Stdio,
    pub stdout: Stdio,
    pub stderr: Stdio,
    /// The job's cgroup's `cgroup.procs`: the child moves itself in before exec.
    pub cgroup_procs: Option<std::fs::File>,
    /// Interactive mode: the pty slave that becomes the job's controlling terminal and stdio.
    pub terminal: Option<RawFd>,
}

/// A started job.
pub struct Spawned {
    /// Its main process.
    pub pid: Pid,
    /// The seccomp layer's broker, answering the job's connects (`None` without the layer).
    pub broker: Option<Broker>,
}

/// Starts the job and returns the pid of its main process once CMD runs.
pub fn spawn(job: Spawn) -> Result<Spawned> {
    start(job)?.release()
}

/// A job whose helper is forked and held before it execs CMD: its pid is known, nothing of CMD has
/// run, and it goes on when `release`d (a supervisor that dies first takes it with it).
pub struct Starting {
    pub pid: Pid,
    go: std::fs::File,
    status: std::os::fd::OwnedFd,
    pending: Option<Pending>,
    shown: String,
}

/// Forks the job's helper, which restricts itself and then waits to be released.
pub fn start(job: Spawn) -> Result<Starting> {
    let (go_read, go_write) = pipe::pipe().map_err(|e| Error::System("cannot create a pipe", e))?;
    let (status_read, status_write) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| Error::System("cannot create a socket pair", e.into()))?;
    let sockets = job.rules.as_ref().and_then(|r| r.sockets.clone());
    let plan = Plan {
        rules: job.rules,
        status_fd: status_write.as_raw_fd(),
        go_fd: go_read.as_raw_fd(),
        job_control: job.terminal.is_some(),
    };
    let plan_json = serde_json::to_string(&plan).map_err(Error::PlanEncoding)?;
    let helper = std::env::current_exe()
        .map_err(|e| Error::io("cannot find the isolate executable", "/proc/self/exe", e))?;

    let mut cmd = Command::new(helper);
    cmd.arg(exec::ARG)
        .arg("--")
        .args(&job.argv)
        .env_clear()
        .envs(job.env)
        .env(PLAN_VAR, plan_json)
        .current_dir(&job.cwd)
        .stdin(job.stdin)
        .stdout(job.stdout)
        .stderr(job.stderr);
    // Before the fork: the broker's thread builds the seccomp filter while the helper starts.
    let pending = match sockets {
        Some(sockets) => {
            let status = status_read
                .try_clone()
                .map_err(|e| Error::System("cannot share the status socket", e))?;
            Some(
                Pending::prepare(sockets, Pid::this(), status)
                    .map_err(|e| Error::Sandbox(format!("cannot start the seccomp broker: {e}")))?,
            )
        }
        None => None,
    };
    let cgroup_fd = job.cgroup_procs.as_ref().map(|f| f.as_raw_fd());
    let terminal = job.terminal;
    let parent = std::process::id() as libc::pid_t;
    let fds = [status_write.as_raw_fd(), go_read.as_raw_fd()];
    // SAFETY: only async-signal-safe calls (setsid, ioctl, dup2, prctl, write, getppid, fcntl)
    // between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(slave) = terminal {
                pty::attach_controlling_terminal(slave)?;
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Into the job's cgroup before anything can fork; a failure leaves the descendant walk.
            if let Some(fd) = cgroup_fd {
                libc::write(fd, b"0".as_ptr().cast(), 1);
            }
            // The supervisor died before the death signal was armed: do not run unsupervised.
            if libc::getppid() != parent {
                libc::_exit(125);
            }
            // The helper keeps the status and release descriptors; CMD's exec closes them again
            // (close_range).
            for fd in fds {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| Error::Sandbox(format!("cannot start the sandbox helper: {e}")))?;
    let pid = Pid::from_raw(child.id() as i32);
    // The reaper owns waitpid from here on; std's handle is never waited on.
    drop(child);
    drop(status_write);
    drop(go_read);
    Ok(Starting {
        pid,
        go: std::fs::File::from(go_write),
        status: status_read,
        pending,
        shown: job.argv[0].clone(),
    })
}

impl Starting {
    /// Lets the helper exec CMD; returns once CMD runs, or with the reason it could not.
    pub fn release(self) -> Result<Spawned> {
        let Starting {
            pid,
            mut go,
            status,
            pending,
            shown,
        } = self;
        // A helper that died meanwhile has its reason on the status socket.
        let _ = std::io::Write::write_all(&mut go, b"g");
        drop(go);
        finish_start(pid, &status, pending, shown)
    }
}

fn finish_start(
    pid: Pid,
    status_read: &std::os::fd::OwnedFd,
    pending: Option<Pending>,
    shown: String,
) -> Result<Spawned> {
    let (listener, report) = handover::read_status(status_read);
    let Some((&code, message)) = report.split_first() else {
        let broker = match (pending, listener) {
            (None, _) => None,
            (Some(pending), Some(listener)) => {
                // The job's own cgroup, not one it shares with this supervisor (a job nested in
                // another job's cgroup has no cgroup of its own: its descendants then say who it is).
                use crate::supervise::cgroup::of_process;
                let cgroup =
                    of_process(pid).filter(|cg| of_process(Pid::this()).as_ref() != Some(cg));
                Some(pending.start(listener, cgroup))
            }
            // CMD runs under a filter nobody would answer: it must not run on.
            (Some(_), None) => {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
                let _ = waitpid(pid, None);
                return Err(Error::Sandbox(
                    "the sandbox helper did not hand over its seccomp listener".into(),
                ));
            }
        };
        return Ok(Spawned { pid, broker });
    };
    if let Some(why) = pending.and_then(|p| p.failure()) {
        let _ = waitpid(pid, None);
        return Err(Error::Sandbox(why));
    }
    // CMD never ran: collect the helper so that no zombie is left, then say why.
    let _ = waitpid(pid, None).map(|s| matches!(s, WaitStatus::Exited(..)));
    let message = String::from_utf8_lossy(message).into_owned();
    Err(match code {
        NOT_FOUND => Error::CommandNotFound(shown),
        NOT_EXECUTABLE => Error::CommandNotExecutable {
            cmd: shown,
            reason: message,
        },
        _ => Error::Sandbox(message),
    })
}
