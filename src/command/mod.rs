//! One file per subcommand; `dispatch` runs the one the command line names and returns the exit
//! status, printing an error (and its hint) once, here.

pub mod run;

use crate::cli::{Cli, Command};
use crate::error::Error;

pub fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Command::Run(args) => run::run(args),
    }
}

/// Prints an error the way every command does: one line, then the hint if there is one.
pub fn report_error(err: &Error) {
    eprintln!("isolate: error: {err}");
    if let Some(hint) = err.hint() {
        eprintln!("{hint}");
    }
}
