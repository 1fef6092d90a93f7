//! A job: its id, its record (the report schema of docs/cli.md) and where records live.

pub mod execs;
pub mod id;
pub mod nest;
pub mod project;
pub(crate) mod queue;
pub mod record;
pub mod roots;
pub mod store;
pub mod worktrees;
