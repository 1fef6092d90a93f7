//! The proxy's word on a destination, as data: why it is allowed ([`Grant`]) or refused
//! ([`Refusal`]), each with the words the log and the refused client read.

use std::fmt;
use std::net::IpAddr;

/// Why a destination is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The name and port are not in the allowlist.
    NotListed,
    /// Every address the name resolves to is local (the first of them).
    Local(IpAddr),
    /// The name does not resolve (the resolver's words).
    Unresolved(String),
    /// The proxy itself.
    Loop,
    /// A port of the job's block that a listener of someone else's holds.
    NotTheJobs,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotListed => f.write_str("not in the job's network allowlist"),
            Refusal::Local(ip) => write!(
                f,
                "resolves to the local address {ip} (loopback, private, link-local or metadata), which the policy does not allow (allow_local)"
            ),
            Refusal::Unresolved(why) => write!(f, "the name does not resolve: {why}"),
            Refusal::Loop => f.write_str("the proxy itself"),
            Refusal::NotTheJobs => f.write_str(
                "a port of the job's block where a server that is not the job's listens",
            ),
        }
    }
}

/// Why a destination is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    /// An entry of the allowlist.
    Listed,
    /// One of the job's own ports on loopback.
    Own,
    /// A local destination an entry of the allowlist names itself (an address, `localhost`):
    /// the machine's, exactly that.
    Named,
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Grant::Listed => "in the allowlist",
            Grant::Own => "the job's own port",
            Grant::Named => "a local destination the allowlist names",
        })
    }
}
