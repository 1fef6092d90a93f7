//! The `[filesystem]` section of a merged policy: its path rules as written, what a missing path
//! does, and the seeds an agent profile carries over. Paths are never resolved here.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default)]
pub struct Filesystem {
    /// Readable and executable, with everything beneath (default `missing`: note).
    pub read: Vec<PathRule>,
    /// Writable, with everything beneath (default `missing`: error).
    pub write: Vec<PathRule>,
    /// Single writable files (default `missing`: error).
    pub write_files: Vec<PathRule>,
    /// The tree the command's own installation occupies is readable and executable
    /// (sandbox/agent/ `installation`): an agent installed per user runs under a policy that
    /// does not read the home directory.
    pub installation: bool,
    /// Files copied before the job starts, when `to` does not exist and `from` does.
    pub seed: Vec<Seed>,
    /// Never readable, whatever the read rules above them grant (credential stores): a read rule
    /// covering one is carved around it. A read rule naming a path inside one re-allows exactly
    /// that path (an agent's own auth file). Default `missing`: ignore.
    pub deny_read: Vec<PathRule>,
}

/// State an agent profile carries over before the job starts: `from` (the agent's file where it
/// keeps it outside isolate) copied to `to` (where the profile makes it keep it), once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    pub from: String,
    pub to: String,
}

/// One path of a policy, as written, and what to do when it does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRule {
    pub path: String,
    pub missing: Missing,
}

/// What a path that does not exist (or names an unset variable) does to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    /// The run fails (status 125).
    Error,
    /// Skipped, and said in the start line.
    Note,
    /// Skipped silently (shown by `isolate policy show`).
    Ignore,
    /// isolate creates it (a directory, or an empty file in `write_files`), mode 0700/0600.
    Create,
}
