//! One file per subcommand; `dispatch` runs the one the command line names and returns the exit
//! status, printing an error (and its hint) once, here.

pub mod doctor;
pub mod import;
pub mod logs;
pub mod merge;
pub mod policy;
pub mod prune;
pub mod ps;
pub mod rm;
pub mod run;
pub mod status;
pub mod stop;
pub mod sync;
pub mod wait;
pub mod worktrees;

use crate::cli::{Cli, Command};
use crate::error::{Error, Result};
use crate::job::record::Record;
use crate::sandbox::policy::{self as sandbox_policy, Loaded};

pub fn dispatch(cli: Cli) -> i32 {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Policy(command) => policy::run(command),
        Command::Ps(args) => ps::run(args),
        Command::Status(args) => status::run(args),
        Command::Logs(args) => logs::run(args),
        Command::Wait(args) => wait::run(args),
        Command::Stop(args) => stop::run(args),
        Command::Rm(args) => rm::run(args),
        Command::Worktrees(args) => worktrees::run(args),
        Command::Prune(args) => prune::run(args),
        Command::Import(args) => import::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Sync(args) => sync::run(args),
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

/// Prints `value` as pretty JSON on stdout; a closed reader is not an error.
pub fn print_json<T: serde::Serialize>(value: &T) -> i32 {
    use std::io::Write;
    let Ok(mut text) = serde_json::to_string_pretty(value) else {
        return 1;
    };
    text.push('\n');
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    0
}

/// The policy a job ran under, loaded again: what runs in its worktree later (`merge`, `sync`,
/// `--resume`) is held to it, never to a wider default. A policy that cannot be loaded again (its
/// file gone or broken) refuses the command.
pub fn recorded_policy(record: &Record) -> Result<Loaded> {
    let reference = record
        .sandbox
        .policy_ref
        .as_deref()
        .unwrap_or(&record.sandbox.policy);
    sandbox_policy::load(reference).map_err(|e| {
        Error::Refused(format!(
            "job {} ran under policy {}, which does not load any more ({e}); \
             restore it, or start a new job from its branch",
            record.id, record.sandbox.policy
        ))
    })
}
