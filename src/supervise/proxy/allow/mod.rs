//! The proxy's decision on a destination: the policy's allowlist (exact names, `*.` wildcards,
//! ports), then the addresses the name resolves to, of which loopback, private, link-local,
//! shared (carrier-grade NAT) and the cloud's metadata addresses are refused unless the policy
//! allows local ones. Loopback is the job's own servers' (the connect checks that only the job
//! listens there), but for a local destination the allowlist names itself.
//!
//! This module must never let a name lead to an address it did not check: the proxy connects to
//! exactly the addresses `resolve` returns, never resolving again.

mod local;
#[cfg(test)]
mod tests;
mod verdict;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use crate::sandbox::policy::{Destination, Host};
use local::{loopback_name, unmapped};

pub use local::local;
pub use verdict::{Grant, Refusal};

/// What the proxy may reach for one job.
#[derive(Debug, Clone)]
pub struct AllowList {
    pub destinations: Vec<Destination>,
    pub allow_local: bool,
    /// The proxy's own address: never a destination (a request to itself would loop).
    pub proxy: Option<SocketAddr>,
}

/// `entry` names a local destination itself: a loopback, private or link-local address, or
/// `localhost` (and the names beneath `.localhost`). Such an entry allows exactly what it names,
/// whatever `allow_local` says (which is about names that resolve to local addresses).
pub fn names_local(entry: &Destination) -> bool {
    match &entry.host {
        Host::Exact(name) => name == "localhost" || name.ends_with(".localhost"),
        Host::Beneath(suffix) => suffix == ".localhost",
        Host::Address(ip) => local(*ip),
    }
}

/// `host` as a request names it: lowercase, without a trailing dot, an IPv6 literal unbracketed.
pub fn normalize(host: &str) -> String {
    let host = host.strip_suffix('.').unwrap_or(host);
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.to_ascii_lowercase()
}

impl AllowList {
    /// The allowlist's word on `host` (normalized) and `port`, before any name is resolved.
    pub fn check(&self, host: &str, port: u16) -> Result<Grant, Refusal> {
        // What the user named (a gateway on the machine's loopback) before the job's own ports.
        let named = |d: &&Destination| names_local(d) && d.matches(host, port);
        if self.destinations.iter().any(|d| named(&d)) {
            return Ok(Grant::Named);
        }
        // The job's own servers, on any port of loopback: in its own network namespace nothing
        // else is there; on the machine's, the connect checks that only the job listens there.
        if loopback_name(host) {
            return Ok(Grant::Own);
        }
        match self.destinations.iter().any(|d| d.matches(host, port)) {
            true => Ok(Grant::Listed),
            false => Err(Refusal::NotListed),
        }
    }

    /// The addresses to connect to for `host`:`port`, allowed by `grant`: every address it resolves
    /// to that the policy lets the proxy reach, in the resolver's order.
    pub fn resolve(&self, host: &str, port: u16, grant: Grant) -> Result<Vec<SocketAddr>, Refusal> {
        let found: Vec<SocketAddr> = match (host.parse::<IpAddr>(), grant) {
            (Ok(ip), _) => vec![SocketAddr::new(ip, port)],
            // The job's own ports by a name kept for loopback (`localhost`, `*.localhost`: RFC
            // 6761), never asked of a resolver: beneath `.localhost` the name is the job's to
            // choose, and the query would carry it off the machine.
            (Err(_), Grant::Own | Grant::Named) => vec![
                SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port),
                SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port),
            ],
            (Err(_), Grant::Listed) => (host, port)
                .to_socket_addrs()
                .map_err(|e| Refusal::Unresolved(e.to_string()))?
                .collect(),
        };
        let first = found.first().map(SocketAddr::ip);
        let usable: Vec<SocketAddr> = found
            .into_iter()
            .map(|a| SocketAddr::new(unmapped(a.ip()), a.port()))
            .filter(|a| Some(*a) != self.proxy)
            .filter(|a| match grant {
                Grant::Own => a.ip().is_loopback(),
                Grant::Named => true,
                Grant::Listed => self.allow_local || !local(a.ip()),
            })
            .collect();
        match (usable.is_empty(), first) {
            (false, _) => Ok(usable),
            (true, None) => Err(Refusal::Unresolved("no address".into())),
            (true, Some(ip)) if Some(SocketAddr::new(unmapped(ip), port)) == self.proxy => {
                Err(Refusal::Loop)
            }
            (true, Some(ip)) => Err(Refusal::Local(ip)),
        }
    }
}
