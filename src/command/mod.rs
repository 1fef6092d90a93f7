//! One file per subcommand; `dispatch` runs the one the command line names and returns the exit
//! status, printing an error (and its hint) once, here.

pub mod doctor;
pub mod policy;
pub mod run;

use crate::cli::{Cli, Command};
use crate::error::Error;

pub fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Policy(command) => policy::run(command),
        Command::Ps(_)
        | Command::Status(_)
        | Command::Logs(_)
        | Command::Wait(_)
        | Command::Stop(_)
        | Command::Rm(_) => {
            eprintln!("isolate: not built yet");
            1
        }
    }
}

/// Prints an error the way every command does: one line, then the hint if there is one.
pub fn report_error(err: &Error) {
    eprintln!("isolate: error: {err}");
    if let Some(hint) = err.hint() {
        eprintln!("{hint}");
    }
}
