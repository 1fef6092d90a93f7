//! What a path rule becomes on this machine: how it is granted (`Access`), what became of it
//! (`Outcome`), and the `Resolved` path with why. Types only, and the one question asked of a list of
//! them; the resolution itself is resolve.rs's.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// How a path rule is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read and execute, everything beneath.
    Read,
    /// List directories, everything beneath; read nothing (`/` around `/dev`).
    List,
    /// Every right but devices, everything beneath.
    Write,
    /// The job's worktree: `Write` without making FIFOs.
    Worktree,
    /// Read, write and truncate one file.
    WriteFile,
    /// A device the job uses whole: read, write, truncate and its ioctls. Only devices whose
    /// ioctls act on nothing but the job's own: `/dev/null` (every ioctl answers ENOTTY),
    /// `/dev/ptmx` (each open makes a new pty, the job's), `/dev/tty` (the caller's controlling
    /// terminal: a job runs in a session of its own, so only ever a terminal of its own), and the
    /// job's own pty in interactive mode.
    Device,
    /// Connect to the unix socket at this path, or to every socket beneath this directory (a rule
    /// of the seccomp layer, not of Landlock).
    Connect,
    /// Never read (a credential store): carved out of every read rule above it (`carve`).
    Deny,
}

/// What became of a path rule on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A rule on `path`.
    Granted,
    /// Created by isolate for this run (`missing = "create"`), then granted.
    Created,
    /// Would be created by a run (`policy show` creates nothing).
    WillCreate,
    /// Missing, skipped (`missing = "note"` or `"ignore"`).
    Skipped,
    /// Missing or unusable: a run fails.
    Failed,
}

/// One path of a policy (or of the job), resolved.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    /// As written in the policy, or what the job's path is (`<worktree>`).
    pub written: String,
    pub access: Access,
    /// Absolute and canonical, when it exists.
    pub path: Option<PathBuf>,
    pub outcome: Outcome,
    /// Why it was skipped, failed or created.
    pub detail: Option<String>,
    /// Whether a skip is said in the start line.
    #[serde(skip)]
    pub(super) noted: bool,
}

/// The policy reads `/` (all but the devices and denied paths `carve` keeps back).
pub(super) fn reads_everything(resolved: &[Resolved]) -> bool {
    resolved.iter().any(|r| {
        r.access == Access::Read
            && r.outcome == Outcome::Granted
            && r.path.as_deref() == Some(Path::new("/"))
    })
}
