//! The word the detached supervisor sends its caller on their pipe: `R` and the running record
//! once CMD has been exec'd, `E`, a status and a message when it never ran, or `Q` and the queued
//! record when the job waits in the queue (its waiter then starts it later, with nobody listening);
//! and the caller's side, which prints it and exits accordingly. Nothing else travels on the pipe.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;

use crate::job::record::Record;

/// The supervisor's end of the pipe to the caller; closed once the caller has been told that the
/// job waits in the queue (nothing more is said then).
pub struct Notify(pub(super) Option<File>);

impl Notify {
    /// CMD runs: hand the caller the running record.
    pub fn started(mut self, record: &Record) {
        let json = serde_json::to_string(record).unwrap_or_default();
        self.say(format!("R{json}").as_bytes());
    }

    /// CMD never ran: the caller exits with `status` and prints `message`.
    pub fn failed(mut self, status: i32, message: &str) {
        let byte = u8::try_from(status).unwrap_or(125);
        self.say(&[b'E', byte]);
        self.say(message.as_bytes());
    }

    /// The job waits in the queue: hand the caller the queued record, and close the pipe (the
    /// caller exits 0).
    pub fn queued(&mut self, record: &Record) {
        let json = serde_json::to_string(record).unwrap_or_default();
        self.say(format!("Q{json}").as_bytes());
        self.0 = None;
    }

    /// Whether the caller still waits for the word.
    pub fn listening(&self) -> bool {
        self.0.is_some()
    }

    fn say(&mut self, bytes: &[u8]) {
        if let Some(pipe) = self.0.as_mut() {
            let _ = pipe.write_all(bytes);
        }
    }
}

/// The caller's side: what the supervisor said, printed; the exit status.
pub(super) fn hear(read: OwnedFd, json: bool) -> i32 {
    let mut said = Vec::new();
    let _ = File::from(read).read_to_end(&mut said);
    match said.split_first() {
        Some((b'R' | b'Q', record)) => {
            let text = String::from_utf8_lossy(record);
            let line = match json {
                true => text.into_owned(),
                false => serde_json::from_str::<Record>(&text)
                    .map(|r| r.id)
                    .unwrap_or_default(),
            };
            // The job runs (or waits) whether or not anyone reads its id: a closed reader is not a
            // failure.
            let _ = writeln!(std::io::stdout(), "{line}");
            0
        }
        Some((b'E', rest)) => {
            let (status, message) = rest
                .split_first()
                .map_or((125, &[][..]), |(s, m)| (i32::from(*s), m));
            say!("isolate: error: {}", String::from_utf8_lossy(message));
            status
        }
        _ => {
            say!("isolate: error: the background supervisor ended before it could start the job");
            125
        }
    }
}
