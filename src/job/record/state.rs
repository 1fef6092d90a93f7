//! Where a job is in its life, with what each stage knows: `State` carries its data (an exit
//! code, a signal), and `Exit` is a code or a signal, never both nor neither. In a record of
//! schema 1 they are its `state` name and its `exit` object (`code` and `signal`); `Phase` and
//! `ExitWire` are that form, used by the record's serialization only.

use serde::{Deserialize, Serialize};

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// A background job waiting for a slot (`max_running`): its supervisor, the waiter, is alive;
    /// nothing of the job is made yet.
    Queued,
    /// Its supervisor is alive and the job has not ended.
    Running,
    /// Its main process exited.
    Exited {
        /// Its exit code.
        code: i32,
    },
    /// A signal ended its main process.
    Killed {
        /// The signal.
        signal: i32,
    },
    /// `--timeout` (or the policy's) stopped it: status 124.
    TimedOut {
        /// How its main process then ended, when the record says.
        exit: Option<Exit>,
    },
    /// Its memory limit (`--memory`) was reached and the kernel killed it: the status of how its
    /// main process ended (137 for SIGKILL).
    OutOfMemory {
        /// How its main process then ended, when the record says.
        exit: Option<Exit>,
    },
    /// It never ran: isolate could not start it when its turn in the queue came (the record's
    /// `never_ran` says why). The status is the one `run` would have exited with (125, 126, 127).
    Failed {
        /// That status.
        status: i32,
    },
    /// Its supervisor died without recording an end (or the record says it ended without saying
    /// how): no status.
    Lost,
}

impl State {
    /// The state's one name, as records, `ps`, `status` and every message write it.
    pub fn name(self) -> &'static str {
        self.phase().name()
    }

    /// The job has ended and said how: what `merge`, `sync` and `--resume` take.
    pub fn ended(self) -> bool {
        !matches!(self, State::Queued | State::Running | State::Lost)
    }

    /// Queued or running: the job has not ended, and (read through `effective_state`) its
    /// supervisor is alive.
    pub fn live(self) -> bool {
        matches!(self, State::Queued | State::Running)
    }

    /// The status `isolate run` and `wait` exit with, once the job has ended: the code, 128+N for
    /// signal N, 124 for a timeout.
    pub fn status(self) -> Option<i32> {
        match self {
            State::Exited { code } => Some(code),
            State::Killed { signal } => Some(128 + signal),
            State::TimedOut { .. } => Some(124),
            State::OutOfMemory { exit } => Some(exit.map_or(128 + libc::SIGKILL, Exit::status)),
            State::Failed { status } => Some(status),
            State::Queued | State::Running | State::Lost => None,
        }
    }

    /// How a job ended: `exit`, or a timeout that ended it so.
    pub fn ended_by(exit: Exit, timed_out: bool) -> State {
        match (exit, timed_out) {
            (exit, true) => State::TimedOut { exit: Some(exit) },
            (Exit::Code(code), false) => State::Exited { code },
            (Exit::Signal(signal), false) => State::Killed { signal },
        }
    }

    /// The wire form: the record's `state` and `exit`.
    pub(super) fn to_wire(self) -> (Phase, Option<Exit>) {
        let exit = match self {
            State::Exited { code } => Some(Exit::Code(code)),
            State::Killed { signal } => Some(Exit::Signal(signal)),
            State::TimedOut { exit } | State::OutOfMemory { exit } => exit,
            State::Failed { status } => Some(Exit::Code(status)),
            State::Queued | State::Running | State::Lost => None,
        };
        (self.phase(), exit)
    }

    /// From the wire form. A record that says it ended but not how reads as lost.
    pub(super) fn from_wire(phase: Phase, exit: Option<Exit>) -> State {
        match (phase, exit) {
            (Phase::Queued, _) => State::Queued,
            (Phase::Running, _) => State::Running,
            (Phase::Lost, _) => State::Lost,
            (Phase::TimedOut, exit) => State::TimedOut { exit },
            (Phase::OutOfMemory, exit) => State::OutOfMemory { exit },
            (Phase::Failed, exit) => State::Failed {
                status: exit.map_or(125, Exit::status),
            },
            (Phase::Exited | Phase::Killed, Some(exit)) => State::ended_by(exit, false),
            (Phase::Exited | Phase::Killed, None) => State::Lost,
        }
    }

    fn phase(self) -> Phase {
        match self {
            State::Queued => Phase::Queued,
            State::Running => Phase::Running,
            State::Exited { .. } => Phase::Exited,
            State::Killed { .. } => Phase::Killed,
            State::TimedOut { .. } => Phase::TimedOut,
            State::OutOfMemory { .. } => Phase::OutOfMemory,
            State::Failed { .. } => Phase::Failed,
            State::Lost => Phase::Lost,
        }
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The record's `state`, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Phase {
    Queued,
    Running,
    Exited,
    Killed,
    TimedOut,
    OutOfMemory,
    Failed,
    Lost,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Queued => "queued",
            Phase::Running => "running",
            Phase::Exited => "exited",
            Phase::Killed => "killed",
            Phase::TimedOut => "timed_out",
            Phase::OutOfMemory => "out_of_memory",
            Phase::Failed => "failed",
            Phase::Lost => "lost",
        }
    }
}

/// How the job's main process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "ExitWire", try_from = "ExitWire")]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// This signal ended it.
    Signal(i32),
}

impl Exit {
    /// The status `isolate run` exits with for it: the code, or 128+N for signal N.
    pub fn status(self) -> i32 {
        match self {
            Exit::Code(code) => code,
            Exit::Signal(signal) => 128 + signal,
        }
    }
}

/// `exit` as written: `{"code": 0, "signal": null}`.
#[derive(Serialize, Deserialize)]
struct ExitWire {
    code: Option<i32>,
    signal: Option<i32>,
}

impl From<Exit> for ExitWire {
    fn from(exit: Exit) -> ExitWire {
        match exit {
            Exit::Code(code) => ExitWire {
                code: Some(code),
                signal: None,
            },
            Exit::Signal(signal) => ExitWire {
                code: None,
                signal: Some(signal),
            },
        }
    }
}

impl TryFrom<ExitWire> for Exit {
    type Error = &'static str;

    fn try_from(wire: ExitWire) -> Result<Exit, Self::Error> {
        match (wire.code, wire.signal) {
            (Some(code), _) => Ok(Exit::Code(code)),
            (None, Some(signal)) => Ok(Exit::Signal(signal)),
            (None, None) => Err("an exit with neither a code nor a signal"),
        }
    }
}
