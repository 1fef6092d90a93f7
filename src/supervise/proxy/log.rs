//! The proxy's decisions, one JSON object per line in `<job_dir>/net.log` (`isolate logs --net`),
//! and the counts the job's record carries. The log is opened `O_APPEND` and each line goes out
//! in a single write(2), under one lock: a reader never sees half a line, nor two lines mixed.
//!
//! What a line holds came from the job (host names, methods): it is JSON-escaped here, and must
//! never be printed to a terminal raw (`logs` passes it through `controls::visible`). The log
//! outlives the job, in the user's state directory, so it holds at most `MAX_BYTES`: a job that
//! made refused requests as fast as it could wrote 394 MB in 10 s. Past that, one last line says
//! so, and the decisions are only counted (the record's counts stay whole).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

use crate::job::record::NetworkCounts;

/// How many refused destinations the record names.
const FIRST_REFUSED: usize = 5;
/// The most the log holds (some 50,000 lines of ordinary requests).
const MAX_BYTES: u64 = 16 << 20;

/// A decision of the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allowed,
    Refused,
    /// Allowed, but the destination could not be reached (its name does not resolve, its connect
    /// failed): not a refusal of the policy's.
    Failed,
}

/// One line of the log.
#[derive(Debug, Serialize)]
pub struct Entry<'a> {
    pub time: String,
    /// The job's end of the connection (`127.0.0.1:PORT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub method: &'a str,
    pub host: &'a str,
    pub port: u16,
    pub decision: Decision,
    pub reason: String,
    pub bytes_up: u64,
    pub bytes_down: u64,
}

/// The log file and the counts, shared by the proxy's threads.
pub struct NetLog {
    /// The file, and how much it holds.
    file: Option<Mutex<(File, u64)>>,
    counts: Mutex<NetworkCounts>,
}

/// The time of a line: RFC 3339, milliseconds.
pub fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

impl NetLog {
    /// A log appended to `path` (created 0600 if missing).
    pub fn open(path: &Path) -> std::io::Result<NetLog> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(path)?;
        let held = file.metadata()?.len();
        Ok(NetLog {
            file: Some(Mutex::new((file, held))),
            counts: Mutex::new(NetworkCounts::default()),
        })
    }

    /// Counts only (a proxy without a job directory: the benchmark's, the tests').
    pub fn counting() -> NetLog {
        NetLog {
            file: None,
            counts: Mutex::new(NetworkCounts::default()),
        }
    }

    /// Records `entry`: counted, and one line of the log.
    pub fn record(&self, entry: &Entry) {
        {
            let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
            match entry.decision {
                Decision::Allowed => counts.allowed += 1,
                Decision::Failed => counts.failed += 1,
                Decision::Refused => {
                    counts.refused += 1;
                    let shown = match entry.host.contains(':') {
                        true => format!("[{}]:{}", entry.host, entry.port),
                        false => format!("{}:{}", entry.host, entry.port),
                    };
                    // A malformed request names no destination.
                    if !entry.host.is_empty()
                        && counts.first_refused.len() < FIRST_REFUSED
                        && !counts.first_refused.contains(&shown)
                    {
                        counts.first_refused.push(shown);
                    }
                }
            }
        }
        let Some(file) = &self.file else { return };
        let Ok(mut line) = serde_json::to_vec(entry) else {
            return;
        };
        line.push(b'\n');
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        let (file, held) = &mut *file;
        if *held >= MAX_BYTES {
            return;
        }
        let last = *held + line.len() as u64 > MAX_BYTES;
        if last {
            line = full();
        }
        // One write(2): O_APPEND places it whole at the end (a regular file takes it whole).
        if let Ok(n) = file.write(&line) {
            *held = match last {
                true => MAX_BYTES,
                false => *held + n as u64,
            };
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> NetworkCounts {
        self.counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The last line of a full log.
fn full() -> Vec<u8> {
    let entry = Entry {
        time: now(),
        client: None,
        method: "",
        host: "",
        port: 0,
        decision: Decision::Refused,
        reason: format!(
            "net.log is full ({} MiB): later decisions are only counted",
            MAX_BYTES >> 20
        ),
        bytes_up: 0,
        bytes_down: 0,
    };
    let mut line = serde_json::to_vec(&entry).unwrap_or_default();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_stops_at_its_cap_with_a_line_that_says_so_and_counts_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("net.log");
        let log = NetLog::open(&path).unwrap();
        let host = "x".repeat(8000);
        let entry = Entry {
            time: now(),
            client: None,
            method: "CONNECT",
            host: &host,
            port: 443,
            decision: Decision::Refused,
            reason: "not in the job's network allowlist".into(),
            bytes_up: 0,
            bytes_down: 0,
        };
        let lines = 2 * MAX_BYTES as usize / host.len();
        for _ in 0..lines {
            log.record(&entry);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.len() as u64 <= MAX_BYTES, "{}", text.len());
        let last = text.lines().last().unwrap();
        assert!(last.contains("net.log is full"), "{last}");
        assert_eq!(log.counts().refused, lines as u64);
    }
}
