//! The project's `setup` command (`.isolate.toml`), in the new worktree, sandboxed like the job,
//! with its environment, in its cgroup, before CMD. Any failure is isolate's (125): the fresh
//! worktree is undone.

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result, SetupFailure};
use crate::sandbox::plan;
use crate::supervise::cgroup::{Cgroup, Limited};
use crate::supervise::log::Log;
use crate::supervise::reaper::{self, Signals};
use crate::supervise::relay::Relay;
use crate::supervise::spawn::{self, Stdio};

/// How long the project's setup may run when the job has no `--timeout` (the job's own when it has).
const SETUP_LIMIT: Duration = Duration::from_secs(3600);

/// The setup of one job.
pub(super) struct Setup<'a> {
    pub(super) command: &'a str,
    pub(super) worktree: &'a Path,
    pub(super) env: &'a [(OsString, OsString)],
    pub(super) rules: Option<plan::Rules>,
    /// The job's log (background), else isolate's stderr: CMD's stdout stays CMD's.
    pub(super) log: Option<&'a Log>,
    pub(super) timeout: Option<Duration>,
    pub(super) grace: Duration,
    pub(super) cgroup: Option<&'a Cgroup>,
    /// The job's limits, where they are v1 cgroups to enter.
    pub(super) limited: Option<&'a Limited>,
}

pub(super) fn run_setup(setup: Setup<'_>, signals: &mut Signals) -> Result<()> {
    let cannot = |e| Error::System("cannot start the setup command", e);
    // A terminal reaches the setup as a relayed pipe, as it does a headless job (supervise/relay.rs):
    // the setup is the job's branch's to change (a merged `.isolate.toml`), not the user's.
    let mut relay = None;
    let output: OwnedFd = match setup.log {
        Some(log) => log.writer.try_clone(),
        None => match Relay::of_terminal(2).map_err(cannot)? {
            Some((write, started)) => {
                relay = Some(started);
                Ok(write)
            }
            None => std::io::stderr().as_fd().try_clone_to_owned(),
        },
    }
    .map_err(cannot)?;
    let err = output.try_clone().map_err(cannot)?;
    let command = setup.command;
    let failed = |failure| Error::Setup {
        command: command.to_string(),
        failure,
    };
    let pid = spawn::spawn(spawn::Spawn {
        argv: vec!["sh".into(), "-c".into(), command.to_string()],
        cwd: setup.worktree.to_path_buf(),
        env: setup.env.to_vec(),
        rules: setup.rules,
        stdin: Stdio::null(),
        stdout: Stdio::from(output),
        stderr: Stdio::from(err),
        cgroup_procs: setup.cgroup.and_then(Cgroup::procs_for_child),
        limit_procs: setup.limited.map(Limited::procs).unwrap_or_default(),
        terminal: None,
    })
    .map_err(|e| failed(SetupFailure::Start(Box::new(e))))?
    .pid;
    if let Some(Err(e)) = relay.as_mut().map(Relay::start) {
        say!("isolate: warning: cannot relay the setup command's output: {e}");
    }
    let limit = setup.timeout.unwrap_or(SETUP_LIMIT);
    let ending = reaper::supervise(pid, signals, Some(limit), setup.grace, setup.cgroup, None);
    if let Some(relay) = relay {
        relay.finish();
    }
    if ending.timed_out() {
        return Err(failed(SetupFailure::TimedOut(limit)));
    }
    match ending.exit().status() {
        0 => Ok(()),
        status => Err(failed(SetupFailure::Status(status))),
    }
}
