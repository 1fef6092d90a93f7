//! Starting the job: fork (from the main thread, which lives as long as the supervisor, because the
//! parent-death signal follows the forking *thread*), a new session, the parent-death signal, then
//! exec of the pre-exec helper (sandbox/exec.rs), which restricts itself and execs CMD. The call
//! returns only once CMD itself has been exec'd, or with the reason it could not be; with the
//! seccomp layer, the helper's notification descriptor arrives on the same socket and the broker
//! (broker.rs) answers on it from then on.

use std::ffi::OsString;
use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use nix::sys::socket::{
    recvmsg, socketpair, AddressFamily, ControlMessageOwned, MsgFlags, SockFlag, SockType,
};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;

use crate::error::{Error, Result};
use crate::sandbox::exec::{self, LISTENER, NOT_EXECUTABLE, NOT_FOUND, PLAN_VAR};
use crate::sandbox::plan::{Plan, Rules};
use crate::supervise::broker::Broker;
use crate::supervise::pty;

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
    let (status_read, status_write) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| Error::Other(format!("cannot create a socket pair: {e}")))?;
    let sockets = job.rules.as_ref().and_then(|r| r.sockets.clone());
    let plan = Plan {
        rules: job.rules,
        status_fd: status_write.as_raw_fd(),
        job_control: job.terminal.is_some(),
    };
    let plan_json = serde_json::to_string(&plan).map_err(|e| Error::Other(e.to_string()))?;
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
    let cgroup_fd = job.cgroup_procs.as_ref().map(|f| f.as_raw_fd());
    let terminal = job.terminal;
    let parent = std::process::id() as libc::pid_t;
    let fd = status_write.as_raw_fd();
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
            // The helper keeps the status descriptor; CMD's exec closes it again (close_range).
            if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
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

    let (listener, report) = read_status(&status_read);
    let Some((&code, message)) = report.split_first() else {
        let broker = match (listener, sockets) {
            (Some(listener), Some(sockets)) => Some(
                Broker::start(listener, sockets, Pid::this())
                    .map_err(|e| Error::Sandbox(format!("cannot start the seccomp broker: {e}")))?,
            ),
            (None, Some(_)) => {
                return Err(Error::Sandbox(
                    "the sandbox helper did not hand over its seccomp listener".into(),
                ))
            }
            _ => None,
        };
        return Ok(Spawned { pid, broker });
    };
    // CMD never ran: collect the helper so that no zombie is left, then say why.
    let _ = waitpid(pid, None).map(|s| matches!(s, WaitStatus::Exited(..)));
    let message = String::from_utf8_lossy(message).into_owned();
    let shown = job.argv[0].clone();
    Err(match code {
        NOT_FOUND => Error::CommandNotFound(shown),
        NOT_EXECUTABLE => Error::CommandNotExecutable {
            cmd: shown,
            reason: message,
        },
        _ => Error::Sandbox(message),
    })
}

/// Reads the helper's status socket to its end: the seccomp listener, if it sent one, and the
/// failure report (empty when CMD was exec'd).
fn read_status(socket: &OwnedFd) -> (Option<OwnedFd>, Vec<u8>) {
    let mut listener = None;
    let mut report = Vec::new();
    loop {
        let mut buf = [0u8; 4096];
        let mut space = nix::cmsg_space!([RawFd; 1]);
        let mut iov = [IoSliceMut::new(&mut buf)];
        let (bytes, fds) = match recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) => {
                let fds: Vec<RawFd> = msg
                    .cmsgs()
                    .into_iter()
                    .flatten()
                    .flat_map(|c| match c {
                        ControlMessageOwned::ScmRights(fds) => fds,
                        _ => Vec::new(),
                    })
                    .collect();
                (msg.bytes, fds)
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        };
        let mut data = &buf[..bytes];
        for fd in fds {
            // SAFETY: a descriptor the kernel just installed for us; nothing else owns it.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            if listener.is_none() && data.first() == Some(&LISTENER) {
                data = &data[1..];
                listener = Some(fd);
            }
        }
        if bytes == 0 {
            break;
        }
        report.extend_from_slice(data);
    }
    (listener, report)
}
