//! How the project's setup command failed (`Error::Setup`).

use super::Error;

/// How the project's setup command failed.
#[derive(Debug, thiserror::Error)]
pub enum SetupFailure {
    #[error("could not start: {0}")]
    Start(Box<Error>),
    #[error("ran longer than {}; the new worktree was removed", humantime::format_duration(*.0))]
    TimedOut(std::time::Duration),
    #[error("failed with status {0}; the new worktree was removed")]
    Status(i32),
}
