//! What can be wrong with git itself (`Error::GitProblem`): not there, too old, or printing what
//! isolate cannot read.

use std::io;
use std::path::PathBuf;

/// git itself is the problem.
#[derive(Debug, thiserror::Error)]
pub enum GitProblem {
    /// git printed what isolate cannot read (`args`: the command, without the hygiene flags).
    #[error("git {args} printed {printed:?}")]
    GitUnreadable { args: &'static str, printed: String },

    /// git cannot be run at all.
    #[error("cannot run git --version: {0}")]
    GitMissing(#[source] io::Error),

    /// This git is older than `what` needs.
    #[error(
        "{what} needs git {}.{} or later; this git is {}.{}.{}",
        .needs.0, .needs.1, .found.0, .found.1, .found.2
    )]
    GitTooOld {
        what: &'static str,
        needs: (u32, u32),
        found: (u32, u32, u32),
    },

    /// `git rev-parse` in `cwd` answered in fewer lines than asked for.
    #[error(
        "cannot read git rev-parse's answer in {} (does a path contain a newline? isolate does not support that)",
        .cwd.display()
    )]
    RevParseUnreadable { cwd: PathBuf },
}
