//! The `[compatibility]` section: whether a kernel feature the policy asks for is required (a run
//! fails without it) or best effort (a gap). Write containment is never best effort.

use serde::{Deserialize, Serialize};

/// Whether a Landlock feature the policy asks for must be enforced (else the run fails) or is best
/// effort (else it is listed as a gap). Write containment is always required.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    #[default]
    Required,
    BestEffort,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Compatibility {
    /// TCP rules (Landlock ABI 4).
    pub network: Level,
    /// Signal and abstract unix socket scopes (Landlock ABI 6).
    pub scopes: Level,
    /// The seccomp layer (unix sockets, UDP, the TCP bypasses; seccomp user notification).
    pub seccomp: Level,
}
