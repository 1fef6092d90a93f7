//! The job record: one JSON document per job, in the schema of docs/cli.md ("Reports"). The same
//! struct is the `--report` file, the record in the state directory and (later) `status --json`.
//! Fields are only ever added; a new meaning needs a new `schema` number.

#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

mod limits;
mod liveness;
mod sandbox;
mod state;
#[cfg(test)]
mod tests;
mod worktree;

pub use limits::JobLimits;
pub use sandbox::{NetworkCounts, Refused, SandboxReport, Tier};
use state::Phase;
pub use state::{Exit, State};
pub use worktree::{Dirty, Push, WorktreeReport};

/// The record schema isolate writes: 1.
pub const SCHEMA: u32 = 1;

/// One job, as its record, its `--report` file and `status --json` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The schema of this record ([`SCHEMA`]).
    pub schema: u32,
    /// The job's id, `<slug>-<4 hex>`; its branch is `isolate/<id>`.
    pub id: String,
    /// `--name`, when given.
    pub name: Option<String>,
    /// CMD, as given after `--`.
    pub command: Vec<String>,
    /// Where the job is in its life (read and set as [`State`], with `exit`, through
    /// [`Record::state`] and [`Record::set_state`]).
    state: Phase,
    /// The job's main process, once started.
    pub pid: Option<i32>,
    /// The main process's start time (clock ticks since boot), so that a later process given the
    /// same pid (a new session leader: the user's shell) is never taken for the job's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<u64>,
    /// The process that supervises the job (and owns its `waitpid`).
    pub supervisor_pid: i32,
    /// The supervisor's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a
    /// recycled pid is never taken for a live supervisor.
    pub supervisor_start: u64,
    /// When the job started (RFC 3339, seconds).
    pub started_at: String,
    /// When it ended, once it has.
    pub ended_at: Option<String>,
    /// How its main process ended, once it has (part of [`Record::state`]).
    exit: Option<Exit>,
    /// What confined it.
    pub sandbox: SandboxReport,
    /// The directory CMD started in.
    pub cwd: String,
    /// Its worktree, with `--worktree` (or `--resume`).
    pub worktree: Option<WorktreeReport>,
    /// A background job's output (stdout and stderr interleaved).
    #[serde(default)]
    pub log: Option<String>,
    /// First of the job's block of 10 TCP ports (`ISOLATE_PORT`).
    #[serde(default)]
    pub port: Option<u16>,
    /// The job's leaf cgroup, when a writable cgroup v2 directory was available.
    #[serde(default)]
    pub cgroup: Option<String>,
    /// True for `--bg` jobs.
    #[serde(default)]
    pub background: bool,
    /// `rm --force` forgot the job but had to leave its worktree on disk: the record stays as a
    /// tombstone that only `worktrees` and `prune` read, so the worktree is never orphaned.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forgotten: bool,
    /// What the job may take (its cgroup's limits), when it asked for any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<JobLimits>,
    /// When the job entered the queue (`max_running`), for one that had to wait there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_at: Option<String>,
    /// Why the job ended without CMD ever running: stopped while queued, or what failed when its
    /// turn came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never_ran: Option<String>,
}

impl Record {
    /// The record of a job this process starts supervising now: running, no pid yet.
    pub fn new(
        id: String,
        name: Option<String>,
        command: Vec<String>,
        sandbox: SandboxReport,
        cwd: String,
        worktree: Option<WorktreeReport>,
    ) -> Record {
        let me = std::process::id() as i32;
        Record {
            schema: SCHEMA,
            id,
            name,
            command,
            state: Phase::Running,
            pid: None,
            pid_start: None,
            supervisor_pid: me,
            supervisor_start: crate::sys::process::start_time(me).unwrap_or(0),
            started_at: crate::words::timestamp(std::time::SystemTime::now()),
            ended_at: None,
            exit: None,
            sandbox,
            cwd,
            worktree,
            log: None,
            port: None,
            cgroup: None,
            background: false,
            forgotten: false,
            limits: None,
            queued_at: None,
            never_ran: None,
        }
    }

    /// Where the job is in its life, as the record says (`effective_state` reads it against the
    /// machine).
    pub fn state(&self) -> State {
        State::from_wire(self.state, self.exit)
    }

    /// The job is now `state`.
    pub fn set_state(&mut self, state: State) {
        (self.state, self.exit) = state.to_wire();
    }
}
