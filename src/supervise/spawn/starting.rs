//! The job's helper forked and held ([`Starting`]): the release pipe and the status socket made,
//! the plan handed over in the environment, the broker's thread started before the fork, and the
//! fork and the child's setup before exec (fork.rs, child.rs). Nothing of CMD runs before `release`.

use std::ffi::OsString;
use std::os::fd::AsRawFd;

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::unistd::Pid;

use super::finish::finish_start;
use super::fork;
use super::{Spawn, Spawned};
use crate::error::{Error, Result};
use crate::sandbox::exec::{self, BUILD_VAR, FALLBACK_VAR, PLAN_VAR};
use crate::sandbox::plan::{Judge, Plan};
use crate::sandbox::{handover, seccomp};
use crate::supervise::broker::Pending;
use crate::sys::pipe;

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
    let mut rules = job.rules;
    if let Some(sockets) = rules.as_mut().and_then(|r| r.sockets.as_mut()) {
        if crate::job::nest::outer().is_some() {
            // The outer job's supervisor holds the one listener its filter chain may have.
            sockets.judge = Judge::OuterJob;
        }
    }
    let sockets = rules.as_ref().and_then(|r| r.sockets.clone());
    let plan = Plan {
        build: exec::BUILD.into(),
        rules,
        status_fd: status_write.as_raw_fd(),
        go_fd: go_read.as_raw_fd(),
        job_control: job.terminal.is_some(),
    };
    let plan_json = serde_json::to_string(&plan).map_err(Error::PlanEncoding)?;
    let helper = exec::program()
        .map_err(|e| Error::io("cannot find the isolate executable", "/proc/self/exe", e))?;
    let mut args: Vec<OsString> = vec![exec::ARG.into(), "--".into()];
    args.extend(job.argv.iter().map(OsString::from));
    let mut env = job.env;
    env.push((PLAN_VAR.into(), plan_json.into()));
    env.push((BUILD_VAR.into(), exec::BUILD.into()));
    if let Some(isolate) = helper.fallback() {
        env.push((FALLBACK_VAR.into(), isolate.into()));
    }
    // Before the fork: the broker's thread builds the seccomp filter while the helper starts.
    let pending = match sockets {
        Some(sockets) if sockets.judge == Judge::OuterJob => {
            if let Some(why) = sockets.unnestable() {
                return Err(Error::Sandbox(why.into()));
            }
            // Nothing to serve: the filter is sent at once, and read by the helper when it
            // gets there.
            let bpf = seccomp::program(&sockets)?;
            handover::send_filter(&status_read, &bpf)
                .map_err(|e| Error::System("cannot send the seccomp filter", e))?;
            None
        }
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
    let pid = fork::fork_exec(fork::Helper {
        program: helper.path(),
        fallback: helper.fallback(),
        args,
        env,
        cwd: &job.cwd,
        stdio: [job.stdin, job.stdout, job.stderr],
        terminal: job.terminal,
        cgroup: job.cgroup_procs.as_ref(),
        keep: [status_write.as_raw_fd(), go_read.as_raw_fd()],
    })
    .map_err(|e| Error::Sandbox(format!("cannot start the sandbox helper: {e}")))?;
    // The reaper owns waitpid from here on.
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
