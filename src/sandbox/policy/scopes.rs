//! The `[scopes]` section of a merged policy: the Landlock scopes (ABI 6) a job is held to.

use serde::Serialize;

/// Landlock scopes (ABI 6); both on unless the policy says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Scopes {
    /// The job may not signal processes outside its sandbox.
    pub signals: bool,
    /// The job may not connect to abstract unix sockets created outside it.
    pub abstract_unix_sockets: bool,
}

impl Default for Scopes {
    fn default() -> Self {
        Scopes {
            signals: true,
            abstract_unix_sockets: true,
        }
    }
}
