//! Where a job is in its life (`state`), and how its main process ended (`exit`).

use serde::{Deserialize, Serialize};

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Its supervisor is alive and the job has not ended.
    Running,
    /// Its main process exited (with `exit.code`).
    Exited,
    /// A signal ended its main process (`exit.signal`).
    Killed,
    /// `--timeout` (or the policy's) stopped it: status 124.
    TimedOut,
    /// Its supervisor died without recording an end: no status.
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
    /// The exit code, when it exited.
    pub code: Option<i32>,
    /// The signal, when one ended it.
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
