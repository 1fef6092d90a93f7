//! The constructors that shape what an error keeps: git's stderr cut to a bound, an I/O error
//! with what isolate was doing and where.

use std::io;
use std::path::PathBuf;

use super::Error;

/// How much of git's stderr an error keeps: a job's repository can make git print a line for each
/// of a hundred thousand objects, and the error goes into the job's record and onto the terminal.
const GIT_STDERR_MAX: usize = 2000;

impl Error {
    /// git `args` failed with `code`, saying `stderr` (trimmed, and cut after `GIT_STDERR_MAX`
    /// bytes with a note of how much more there was).
    pub fn git(args: impl Into<String>, code: Option<i32>, stderr: &[u8]) -> Self {
        let text = String::from_utf8_lossy(stderr);
        let text = text.trim();
        let stderr = if text.len() <= GIT_STDERR_MAX {
            text.to_string()
        } else {
            let mut cut = GIT_STDERR_MAX;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{} … ({} more bytes)", &text[..cut], text.len() - cut)
        };
        Error::Git {
            args: args.into(),
            code,
            stderr,
        }
    }

    pub fn io(what: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            what,
            path: path.into(),
            source,
        }
    }
}
