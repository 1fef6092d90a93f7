//! The one runner for git in the *project* (the user's repository), with the hygiene of
//! docs/worktrees.md: hooks and fsmonitor off, no pager, no prompts, no shell, a timeout, and none of
//! the caller's `GIT_DIR`-style variables. Never point it at a job's repository after the job ran:
//! git there would run whatever the job planted (see `worktree::inspect` for how those are read).
//! The hygiene is hygiene.rs, the runs run.rs, the bounded wait wait.rs, git's version version.rs;
//! the project itself (the user's repository, found from the cwd) is project.rs, which paths a
//! filter driver writes attributes.rs, the reads of its
//! refs done in-process refs.rs, a ref transaction prepared ahead of its commit transaction.rs,
//! the bounds of what comes in from a job or a remote bounds.rs, and the directory a fetch's
//! objects wait in until git checked them quarantine.rs.

pub mod attributes;
mod borrowed;
pub(crate) mod bounds;
mod hygiene;
pub mod mark;
pub mod project;
mod quarantine;
mod refs;
pub mod remote;
mod run;
#[cfg(test)]
pub mod scratch;
pub mod transaction;
mod version;
mod wait;

pub use borrowed::borrowed;
pub use hygiene::{command, redirects, CONFIG, ENV, LOCATION_VARS, NO_HOOKS, REDIRECTING_VARS};
pub use run::{
    checked, describe, run, run_command, run_on_terminal, run_with_input, try_run,
    try_run_with_input, Output,
};
pub use version::{require, version};
pub use wait::{collect, wait, MAX_OUTPUT, TIMEOUT};
