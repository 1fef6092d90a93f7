//! The one way out of every command: what it prints on standard output goes through [`line`] and
//! [`json`], which turn a failed write into [`Error::Output`] instead of a panic, and [`finish`]
//! turns the command's result into its exit status, printing an error once. A reader that went
//! away (`isolate ps --all | head -2`) ends the command quietly with status 0, as `logs` always did:
//! it asked for no more.

use std::fmt;
use std::io::{self, Write};

use crate::error::{Error, Result};

/// One line of a command's output (`out!` is the `println!` of commands), its control characters
/// made visible: a line names what a job chose (refs, paths, reasons git gave), and isolate's own
/// lines hold none.
pub fn line(args: fmt::Arguments<'_>) -> Result<()> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(&shown(args))
        .and_then(|()| stdout.write_all(b"\n"))
        .map_err(Error::Output)
}

/// One of isolate's messages on standard error (`say!`), its control characters made visible as
/// `line` makes them: a message quotes what a job wrote (git's messages name its files and refs),
/// to be shown, never obeyed, by the terminal.
pub fn say(args: fmt::Arguments<'_>) {
    let mut text = shown(args);
    text.push(b'\n');
    let _ = io::stderr().lock().write_all(&text);
}

/// `args` formatted, with tabs and line ends kept and every other control character visible.
fn shown(args: fmt::Arguments<'_>) -> Vec<u8> {
    let text = match args.as_str() {
        Some(text) => std::borrow::Cow::Borrowed(text),
        None => std::borrow::Cow::Owned(args.to_string()),
    };
    crate::controls::visible(text.as_bytes(), crate::controls::Lines::Kept)
}

/// `text` on standard output, its control characters made visible as `line` makes them (a
/// policy shown may be one a job's branch proposed).
pub fn text(text: &str) -> Result<()> {
    io::stdout()
        .lock()
        .write_all(&crate::controls::visible(
            text.as_bytes(),
            crate::controls::Lines::Kept,
        ))
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
    // An error can carry what a job wrote (git's messages name its files and refs): `say!` shows
    // its control characters, never lets the terminal obey them.
    say!("isolate: error: {err}");
    if let Some(hint) = err.hint() {
        say!("{hint}");
    }
}
