//! How a supervised tree ended ([`Ending`]): the main process's exit, and whether the `--timeout`
//! is what ended it. The reaper produces it; the record and the exit status are made from it.

use crate::job::record::Exit;

/// How the job ended.
#[derive(Debug, Clone, Copy)]
pub enum Ending {
    /// The main process ended (by itself, by a signal, or by a stop from outside).
    Ended(Exit),
    /// The `--timeout` passed and the stop sequence ended it.
    TimedOut(Exit),
}

impl Ending {
    /// The main process's exit.
    pub fn exit(&self) -> Exit {
        match *self {
            Ending::Ended(exit) | Ending::TimedOut(exit) => exit,
        }
    }

    /// The `--timeout` stopped it.
    pub fn timed_out(&self) -> bool {
        matches!(self, Ending::TimedOut(_))
    }
}
