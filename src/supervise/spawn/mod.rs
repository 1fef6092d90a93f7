//! Starting the job: fork (from the main thread, which lives as long as the supervisor, because the
//! parent-death signal follows the forking *thread*; into the job's cgroup, fork.rs), a new
//! session, the parent-death signal, then the sandbox entered (`sandbox::exec::enter`: restrict,
//! then exec CMD), by the child itself when the supervisor had no other thread, else by the
//! pre-exec helper the child execs. The call returns only once CMD itself has been exec'd, or with
//! the reason it could not be; with the seccomp layer, the notification descriptor arrives on the
//! same socket and the broker (broker/) answers on it from then on.

mod child;
mod finish;
mod fork;
mod starting;
mod stdio;

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::path::PathBuf;

use nix::unistd::Pid;

use crate::error::Result;
use crate::sandbox::plan::Rules;
use crate::supervise::broker::Broker;
use crate::supervise::cgroup::ForChild;

pub use starting::{start, Starting};
pub use stdio::Stdio;

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
    /// The job's cgroup: the child is forked into it (or moves itself in before exec).
    pub cgroup_procs: Option<ForChild>,
    /// The `cgroup.procs` of the job's cgroups in v1 hierarchies (its limits on a hybrid
    /// machine): the child moves itself into each before exec.
    pub limit_procs: Vec<std::fs::File>,
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
