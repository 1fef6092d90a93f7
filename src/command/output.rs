//! The one way out of every command: what it prints on standard output goes through [`line`] and
//! [`json`], which turn a failed write into [`Error::Output`] instead of a panic, and [`finish`]
//! turns the command's result into its exit status, printing an error once. A reader that went
//! away (`isolate ps --all | head -2`) ends the command quietly with status 0, as `logs` always did:
//! it asked for no more.

use std::fmt;
use std::io::{self, Write};

use crate::error::{Error, Result};

/// One line of a command's output (`out!` is the `println!` of commands).
pub fn line(args: fmt::Arguments<'_>) -> Result<()> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_fmt(args)
        .and_then(|()| stdout.write_all(b"\n"))
        .map_err(Error::Output)
}

/// `text` as it is on standard output.
pub fn text(text: &str) -> Result<()> {
    io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Error::Output)
}

/// `value` as pretty JSON on standard output.
pub fn json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(|e| Error::Output(e.into()))?;
    text.push('\n');
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(Error::Output)
}

/// The exit status of a command that ended with `result`: its own status, `0` when its reader went
/// away, else `failed` after the error (and its hint) is printed.
pub fn finish(result: Result<i32>, failed: i32) -> i32 {
    let result = result.and_then(|status| {
        io::stdout().flush().map_err(Error::Output)?;
        Ok(status)
    });
    match result {
        Ok(status) => status,
        Err(Error::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            report_error(&e);
            failed
        }
    }
}

/// Prints an error the way every command does: one line, then the hint if there is one.
pub fn report_error(err: &Error) {
    // An error can carry what a job wrote (git's messages name its files and refs): shown, never
    // obeyed, by the terminal.
    let text = crate::controls::visible(err.to_string().as_bytes(), crate::controls::Lines::Kept);
    say!("isolate: error: {}", String::from_utf8_lossy(&text));
    if let Some(hint) = err.hint() {
        say!("{hint}");
    }
}
