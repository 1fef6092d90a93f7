//! One file per subcommand; `dispatch` runs the one the command line names and returns the exit
//! status, printing an error (and its hint) once, here.

pub mod attach;
pub mod completions;
pub mod doctor;
pub mod import;
pub mod logs;
pub mod merge;
pub mod output;
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

pub use output::report_error;

/// Runs the command and returns its exit status; every command but `run` (whose failures are
/// 125, 126 and 127, docs/cli.md) exits 1 when it fails.
pub fn dispatch(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Run(args) => Ok(run::run(args)),
        Command::Exec(args) => Ok(run::exec(args)),
        Command::Attach(args) => attach::run(args),
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
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => completions::man(args),
        Command::CompleteJobs => completions::jobs(),
    };
    output::finish(result, 1)
}

/// Prints `value` as pretty JSON on stdout; the command's status is 0.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<i32> {
    output::json(value)?;
    Ok(0)
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
    sandbox_policy::load(reference).map_err(|e| Error::Job {
        job: record.id.to_string(),
        why: format!(
            "ran under policy {}, which does not load any more ({e}); \
             restore it, or start a new job from its branch",
            record.sandbox.policy
        ),
    })
}
