//! A record read against the machine: a record that says `running` (or `queued`) is only as good
//! as its supervisor, which must still be the process it names (same pid, same start time) and must not
//! have ended.

use super::{Record, State};

impl Record {
    /// The state to show: a record that says `running` or `queued` whose supervisor is gone (a
    /// pid that is no longer there, or one recycled for another process) is `lost`.
    pub fn effective_state(&self) -> State {
        match self.state() {
            State::Running | State::Queued if !self.supervisor_alive() => State::Lost,
            state => state,
        }
    }

    /// The supervisor named by the record is alive: same pid, same start time, and not a zombie
    /// (one SIGKILLed under a parent that has not reaped it yet supervises nothing).
    pub fn supervisor_alive(&self) -> bool {
        crate::sys::process::live_start_time(self.supervisor_pid) == Some(self.supervisor_start)
    }

    /// The status `wait` exits with, once the job has ended.
    pub fn exit_status(&self) -> Option<i32> {
        self.state().status()
    }
}
