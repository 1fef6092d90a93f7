//! The policy as the user wrote it: TOML, every key known (a typo in a security policy must not
//! silently widen or narrow it), then merged along its `extends` chain into one `Policy` with every
//! default filled in. Paths stay as written here (`~`, `$VAR`); plan/ resolves them for a job.
//! Built-in profiles are the files of `policy/`, compiled in; a user's own live in
//! `$XDG_CONFIG_HOME/isolate/policy/NAME.toml`. This file holds the merged `Policy` and the
//! `Loaded` one; its sections, the file as written, loading and merging are in the files beside it.

mod compatibility;
mod destination;
mod environment;
mod file;
mod filesystem;
mod limits;
mod load;
mod merge;
mod network;
mod profiles;
mod scopes;
#[cfg(test)]
mod tests;
mod worktree;

use std::collections::BTreeMap;

pub use compatibility::{Compatibility, Level};
pub use destination::{Destination, Host};
pub use environment::{matches, Environment};
pub use filesystem::{Filesystem, Missing, PathRule, Seed};
pub use limits::Limits;
pub use load::load;
pub use network::{Network, Ports, Reach};
pub use profiles::{user_dir, BUILTIN};
pub use scopes::Scopes;
pub use worktree::{IgnoreRule, Worktree};

/// A policy resolved along its `extends` chain, every default filled in.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub filesystem: Filesystem,
    pub network: Network,
    pub scopes: Scopes,
    pub environment: Environment,
    pub limits: Limits,
    pub compatibility: Compatibility,
    /// `[command]`: arguments put after CMD's first word when CMD is the known agent whose
    /// profile is the key (`codex = ["-c", "daemon_auto_start=false"]`), said in the start line.
    pub command: BTreeMap<String, Vec<String>>,
    /// `[worktree]`: what the job's worktree ignores beyond the project's rules.
    pub worktree: Worktree,
}

/// A loaded policy and the name it is reported under.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// A profile's name, or the file's path as given.
    pub name: String,
    /// What `load` takes to load it again from anywhere: the profile's name, or the file's
    /// canonical path. Recorded with a job, so that what runs in its worktree later (`merge`,
    /// `sync`, `--resume`) runs under the same policy.
    pub reference: String,
    /// Where it came from, then what it extends, in order (`claude-code`, `default`).
    pub sources: Vec<String>,
    pub policy: Policy,
}
