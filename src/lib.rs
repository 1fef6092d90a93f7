//! isolate as a library: the binary (src/main.rs) is a thin shell over it, and the fuzz targets
//! (fuzz/) drive its parsers (job ids, policies, records) directly.

/// `eprintln!` that never panics: isolate's messages must not fail a job whose terminal went away.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::command::output::say(format_args!($($arg)*))
    };
}

/// `println!` for a command's output (command/output.rs): a reader that went away is an
/// `Error::Output` for the command to return, never a panic.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::command::output::line(format_args!($($arg)*))
    };
}

pub mod cli;
pub mod command;
pub mod config;
pub mod controls;
pub mod error;
pub mod git;
pub mod job;
pub mod sandbox;
pub mod supervise;
pub mod sys;
pub mod textfile;
pub mod words;
pub mod worktree;
