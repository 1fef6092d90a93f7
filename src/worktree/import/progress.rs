//! index-pack's progress of a large import on the user's terminal: its stderr read to the end (the
//! bounds are read from it), and when `sys::progress` is wanted, its progress line shown once it
//! counts `SHOWN_FROM` objects or more (a job's few commits say nothing). Job-chosen bytes never
//! reach the terminal: only git's own counting lines are shown, their control characters escaped.

use std::io::{Read, Write};
use std::process::ChildStderr;
use std::thread::{self, JoinHandle};

use crate::git::MAX_OUTPUT;

/// The fewest objects whose import shows its progress.
const SHOWN_FROM: u64 = 1_000;

/// Reads `stderr` on a thread of its own, showing the progress of a large import as it goes;
/// joined, what it read (at most `MAX_OUTPUT` bytes).
pub(super) fn tee(stderr: ChildStderr) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let show = crate::sys::progress::wanted();
        let mut all = Vec::new();
        let mut line = Vec::new();
        let mut shown = false;
        let mut buf = [0u8; 8192];
        let mut reader = stderr.take(MAX_OUTPUT + 1);
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
            for &b in &buf[..n] {
                if b != b'\r' && b != b'\n' {
                    line.push(b);
                    continue;
                }
                if show && large(&line) {
                    let text = crate::controls::name(&String::from_utf8_lossy(&line));
                    let _ = write!(std::io::stderr(), "\r\x1b[Kisolate: {text}");
                    shown = true;
                }
                line.clear();
            }
        }
        if shown {
            let _ = writeln!(std::io::stderr());
        }
        all
    })
}

/// A progress line of git's counting `SHOWN_FROM` objects or more: `Receiving objects:  45%
/// (450/1000)`, `Resolving deltas: …`.
fn large(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    let counting = text.starts_with("Receiving objects")
        || text.starts_with("Resolving deltas")
        || text.starts_with("Indexing objects");
    let total = text
        .rsplit_once('/')
        .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u64>().ok());
    counting && total.is_some_and(|t| t >= SHOWN_FROM)
}

#[cfg(test)]
mod tests {
    use super::large;

    #[test]
    fn only_the_counting_lines_of_a_large_import_show() {
        assert!(large(b"Receiving objects:  45% (4500/10000)"));
        assert!(large(b"Resolving deltas: 100% (1200/1200), done."));
        assert!(!large(b"Receiving objects: 100% (3/3), done."));
        assert!(!large(b"error: object 1/2000 is bad"));
    }
}
