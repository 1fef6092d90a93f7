//! How an inspection fails: every variant names the repository it was about. Never carries what
//! the job wrote unbounded.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// `<worktree>/.git` is missing, not a real directory, or laid out unlike isolate's job repositories.
    #[error("cannot inspect {path}: {reason}")]
    NotARepository { path: PathBuf, reason: String },
    /// Ignore rules the job wrote where nobody reviews them (patterns.rs): what they would hide
    /// cannot be told from what the job left on purpose.
    #[error("cannot inspect {path}: {reason}")]
    Untrusted { path: PathBuf, reason: String },
    /// gix failed to open or read the repository.
    #[error("cannot inspect {path}: {what}: {source}")]
    Git {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: gix::Error,
    },
    /// A file that had to be read directly could not be.
    #[error("cannot inspect {path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// An id passed to [`missing_from`] is not a full hexadecimal object id.
    #[error("invalid object id {id:?}: {reason}")]
    InvalidId { id: String, reason: String },
}
