//! A job's worktree: a shared clone of the project on branch `isolate/<id>` (create.rs, with the
//! `.worktreeinclude` copy of include.rs), the import of its commits into the project (import.rs),
//! reads of its repository that execute nothing planted there (inspect.rs), and the one cleanup
//! predicate every ending goes through (cleanup.rs), and where a job's branch stands against the
//! project branch (standing.rs).

pub mod checkouts;
pub mod cleanup;
pub mod create;
pub mod import;
pub mod include;
pub mod inspect;
pub mod marks;
pub mod merge;
pub mod remove;
pub mod sandboxed;
pub mod standing;
