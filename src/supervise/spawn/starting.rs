//! The job's first process forked and held ([`Starting`]): the release pipe and the status socket
//! made, the plan handed over (in memory to a child that enters the sandbox itself, in the
//! environment to the helper), the fork and the child's setup (fork.rs, child.rs), then the
//! broker's thread, which builds the seccomp filter while the child restricts itself. Nothing of
//! CMD runs before `release`.

use std::ffi::OsString;
use std::os::fd::AsRawFd;

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::unistd::Pid;

use super::finish::{discard, finish_start};
use super::fork::{self, Start};
use super::{Spawn, Spawned};
use crate::error::{Error, Result};
use crate::sandbox::exec::{self, Environment, Program, BUILD_VAR, FALLBACK_VAR, PLAN_VAR};
use crate::sandbox::plan::{Judge, Plan};
use crate::sandbox::{handover, seccomp};
use crate::supervise::broker::Pending;
use crate::sys::pipe;
use crate::sys::process::threads;

/// A job whose first process is forked and held before it execs CMD: its pid is known, nothing of CMD has
/// run, and it goes on when `release`d (a supervisor that dies first takes it with it).
pub struct Starting {
    pub pid: Pid,
    /// The job's cgroup, when the fork placed the first process in it (nothing to check).
    pub placed: Option<std::path::PathBuf>,
    go: std::fs::File,
    status: std::os::fd::OwnedFd,
    pending: Option<Pending>,
    shown: String,
}

/// Forks the job's first process, which restricts itself and then waits to be released.
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
        sentinel: job.cgroup_procs.is_none(),
    };
    // Nothing to serve for a job nested in another: its filter is sent at once, and read when the
    // child gets there.
    let serve = match sockets {
        Some(sockets) if sockets.judge == Judge::OuterJob => {
            if let Some(why) = sockets.unnestable() {
                return Err(Error::Sandbox(why.into()));
            }
            let bpf = seccomp::program(&sockets)?;
            handover::send_filter(&status_read, &bpf)
                .map_err(|e| Error::System("cannot send the seccomp filter", e))?;
            None
        }
        sockets => sockets,
    };
    let env = job.env;
    let enter = || {
        exec::enter(&plan, &job.argv, Environment::Given(&env));
    };
    // A supervisor with no other thread has its forked child enter the sandbox itself: a copy of a
    // single-threaded process may allocate. With another thread (the proxy's), one could hold a
    // lock the copy would wait on forever: the child execs the helper instead, a fresh process.
    // Only this thread starts threads, so none can appear between the count and the fork. Job
    // control on the job's terminal also takes the helper: its monitor outlives the start and is
    // in the job's sandbox, where the job may read it, so it must be a process of the job's own
    // (its environment, no descriptor of the supervisor's), not a copy of the supervisor.
    let helper;
    let start = if threads() == Some(1) && !plan.job_control {
        fork::exec_strings(&job.argv, &env)
            .map_err(|e| Error::Sandbox(format!("cannot start the job: {e}")))?;
        Start::Within {
            enter: &enter,
            close: [status_read.as_raw_fd(), go_write.as_raw_fd()],
        }
    } else {
        helper = exec::program()
            .map_err(|e| Error::io("cannot find the isolate executable", "/proc/self/exe", e))?;
        through_helper(&plan, &job.argv, &env, &helper)?
    };
    // The namespaces the child joins, by the descriptors the holder gave (never by /proc/<pid>).
    let mut keep = vec![status_write.as_raw_fd(), go_read.as_raw_fd()];
    if let Some(ns) = plan.rules.as_ref().and_then(|r| r.namespaces.as_ref()) {
        keep.push(ns.user_fd);
        keep.extend(ns.net_fd);
    }
    let (pid, placed) = fork::fork_child(fork::Child {
        start,
        cwd: &job.cwd,
        stdio: [job.stdin, job.stdout, job.stderr],
        terminal: job.terminal,
        cgroup: job.cgroup_procs.as_ref(),
        limit_procs: &job.limit_procs,
        keep: &keep,
    })
    .map_err(|e| Error::Sandbox(format!("cannot start the job: {e}")))?;
    // After the fork: the broker's thread builds the seccomp filter while the child restricts
    // itself, and the child waits for it.
    let pending = match serve {
        Some(sockets) => {
            let prepared = status_read
                .try_clone()
                .and_then(|status| Pending::prepare(sockets, Pid::this(), status));
            match prepared {
                Ok(pending) => Some(pending),
                Err(e) => {
                    discard(pid);
                    return Err(Error::Sandbox(format!(
                        "cannot start the seccomp broker: {e}"
                    )));
                }
            }
        }
        None => None,
    };
    // The reaper owns waitpid from here on.
    drop(status_write);
    drop(go_read);
    Ok(Starting {
        pid,
        placed,
        go: std::fs::File::from(go_write),
        status: status_read,
        pending,
        shown: job.argv[0].clone(),
    })
}

/// The child's start through the pre-exec helper `helper`: its arguments, and CMD's environment
/// with the plan, this build's identity and isolate's own executable (for a helper of another
/// build) added.
fn through_helper<'a>(
    plan: &Plan,
    argv: &[String],
    env: &[(OsString, OsString)],
    helper: &'a Program,
) -> Result<Start<'a>> {
    let plan_json = serde_json::to_string(plan).map_err(Error::PlanEncoding)?;
    let mut args: Vec<OsString> = vec![exec::ARG.into(), "--".into()];
    args.extend(argv.iter().map(OsString::from));
    let mut env = env.to_vec();
    env.push((PLAN_VAR.into(), plan_json.into()));
    env.push((BUILD_VAR.into(), exec::BUILD.into()));
    if let Some(isolate) = helper.fallback() {
        env.push((FALLBACK_VAR.into(), isolate.into()));
    }
    Ok(Start::Helper {
        program: helper.path(),
        fallback: helper.fallback(),
        args,
        env,
    })
}

impl Starting {
    /// Kills and collects the job's first process, held before CMD: it never runs.
    pub fn abandon(self) {
        discard(self.pid);
    }

    /// Lets the job's first process exec CMD; returns once CMD runs, or with the reason it could not.
    pub fn release(self) -> Result<Spawned> {
        let Starting {
            pid,
            placed,
            mut go,
            status,
            pending,
            shown,
        } = self;
        // A first process that died meanwhile has its reason on the status socket.
        let _ = std::io::Write::write_all(&mut go, b"g");
        drop(go);
        finish_start(pid, placed, &status, pending, shown)
    }
}
