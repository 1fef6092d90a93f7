//! The job record: one JSON document per job, in the schema of spec/cli.md ("Reports"). The same
//! struct is the `--report` file, the record in the state directory and (later) `status --json`.
//! Fields are only ever added; a new meaning needs a new `schema` number.

use serde::{Deserialize, Serialize};

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Running,
    Exited,
    Killed,
    TimedOut,
    Lost,
}

impl State {
    /// The state's one name, as records, `ps`, `status` and every message write it.
    pub fn name(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Exited => "exited",
            State::Killed => "killed",
            State::TimedOut => "timed_out",
            State::Lost => "lost",
        }
    }

    /// The job has ended and said how: what `merge`, `sync` and `--resume` take.
    pub fn ended(self) -> bool {
        !matches!(self, State::Running | State::Lost)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the job's main process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl Exit {
    /// The status `isolate run` and `wait` exit with: the code, or 128+N for signal N.
    pub fn status(&self) -> i32 {
        match (self.code, self.signal) {
            (Some(code), _) => code,
            (None, Some(sig)) => 128 + sig,
            (None, None) => 125,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxReport {
    /// True when Landlock restricted the job (false only with --no-sandbox).
    pub enforced: bool,
    /// The kernel's Landlock ABI, when it has Landlock.
    pub landlock_abi: Option<u32>,
    pub policy: String,
    /// What loads the policy again (its profile name, or its file's canonical path): `merge`, `sync`
    /// and `--resume` run what is in the job's worktree under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_ref: Option<String>,
    /// Every place the sandbox does not reach, as data (spec/sandbox.md, "Gaps").
    pub gaps: Vec<String>,
    /// The writable paths `--allow-write` added, canonical.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_write: Vec<String>,
    /// What the seccomp layer's broker refused the job (set when the job ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<Refused>,
}

impl SandboxReport {
    /// The Landlock ABI that confined the job; `None` when nothing did (`--no-sandbox`).
    pub fn confined_by(&self) -> Option<u32> {
        self.landlock_abi.filter(|_| self.enforced)
    }

    /// What confined the job, as the start line and `status` say it: `landlock ABI 7, policy
    /// default`; `None` unsandboxed.
    pub fn summary(&self) -> Option<String> {
        let abi = self.confined_by()?;
        Some(format!("landlock ABI {abi}, policy {}", self.policy))
    }
}

/// Calls of the job the seccomp layer's broker refused, by kind. (What the filter refuses by a call's
/// arguments alone, such as a raw socket, the kernel answers without isolate seeing it.)
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    /// Connects to unix sockets served from outside the job (path-named or abstract).
    pub unix_connect: u64,
    /// TCP connects to a port the policy does not allow.
    pub tcp_connect: u64,
    /// listen() on a TCP socket that was never bound, where TCP bind is restricted.
    pub listen: u64,
    /// What the job's network proxy decided, when a domain allowlist applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkCounts>,
}

/// The decisions of a job's network proxy (its domain allowlist): every one is a line of the job's
/// `net.log` (`isolate logs --net`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkCounts {
    /// Requests the proxy let through.
    pub allowed: u64,
    /// Requests it refused (403: a name not allowed, a local address; 407; malformed requests).
    pub refused: u64,
    /// The first destinations it refused (`host:port`), at most 5, each once.
    #[serde(default)]
    pub first_refused: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dirty {
    pub modified: usize,
    pub untracked: usize,
    pub conflicted: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeReport {
    pub path: String,
    pub branch: String,
    pub base: String,
    pub repo: String,
    /// Commits on the project's branch beyond base.
    pub commits: usize,
    pub dirty: Dirty,
    /// Stash entries in the job's repository (they keep the worktree).
    #[serde(default)]
    pub stash: usize,
    /// Other branches and tags of the job holding commits the project lacks (they keep the worktree).
    #[serde(default)]
    pub other_refs: Vec<String>,
    /// A merge, rebase, cherry-pick, revert or bisect left in progress.
    #[serde(default)]
    pub in_progress: Vec<String>,
    /// Ignored files (build output) that went with a removed worktree.
    #[serde(default)]
    pub ignored: usize,
    /// The project's checkout had uncommitted changes when the job started (they are not in the worktree).
    #[serde(default)]
    pub dispatch_dirty: bool,
    pub removed: bool,
    pub branch_kept: bool,
    pub reason: String,
    pub handoff: Option<String>,
    /// Where isolate last left the project's branch (base, or the tip it imported), so that a
    /// later import can tell whether someone else moved it.
    #[serde(default)]
    pub branch_tip: Option<String>,
    /// The project's branch the job was started from (`merge` and `sync` bring it in).
    #[serde(default)]
    pub project_branch: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub schema: u32,
    pub id: String,
    pub name: Option<String>,
    pub command: Vec<String>,
    pub state: State,
    pub pid: Option<i32>,
    pub supervisor_pid: i32,
    /// The supervisor's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a
    /// recycled pid is never taken for a live supervisor.
    pub supervisor_start: u64,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub exit: Option<Exit>,
    pub sandbox: SandboxReport,
    /// The directory CMD started in.
    pub cwd: String,
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
}

impl Record {
    /// The state to show: a record that says `running` whose supervisor is gone (a pid that is no
    /// longer there, or one recycled for another process) is `lost`.
    pub fn effective_state(&self) -> State {
        match self.state {
            State::Running if !self.supervisor_alive() => State::Lost,
            state => state,
        }
    }

    /// The supervisor named by the record is alive: same pid, same start time.
    pub fn supervisor_alive(&self) -> bool {
        crate::sys::process::start_time(self.supervisor_pid) == Some(self.supervisor_start)
    }

    /// The status `wait` exits with, once the job has ended.
    pub fn exit_status(&self) -> Option<i32> {
        match self.state {
            State::TimedOut => Some(124),
            State::Exited | State::Killed => self.exit.map(|e| e.status()),
            State::Running | State::Lost => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of schema 1 as isolate wrote them (one from a real run, one with every optional field
    /// set): read and written again, byte for byte. A change to the types that changes the wire
    /// form fails here.
    const SAMPLES: [&str; 2] = [
        include_str!("../../tests/data/record-schema-1-exited.json"),
        include_str!("../../tests/data/record-schema-1-timed-out.json"),
    ];

    #[test]
    fn a_schema_1_record_is_written_back_byte_for_byte() {
        for sample in SAMPLES {
            let record: Record = serde_json::from_str(sample).unwrap();
            let written = serde_json::to_string_pretty(&record).unwrap() + "\n";
            assert_eq!(written, sample);
        }
    }

    #[test]
    fn a_schema_1_record_reads_as_the_job_it_describes() {
        let exited: Record = serde_json::from_str(SAMPLES[0]).unwrap();
        assert_eq!(exited.state, State::Exited);
        assert_eq!(exited.exit_status(), Some(0));
        let timed_out: Record = serde_json::from_str(SAMPLES[1]).unwrap();
        assert_eq!(timed_out.state, State::TimedOut);
        assert_eq!(timed_out.exit_status(), Some(124));
        assert!(timed_out.forgotten);
    }
}
