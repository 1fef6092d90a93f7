//! The proxy's decision on a destination: the policy's allowlist (exact names, `*.` wildcards,
//! ports), then the addresses the name resolves to, of which loopback, private, link-local,
//! shared (carrier-grade NAT) and the cloud's metadata addresses are refused unless the policy
//! allows local ones. The job's own ports on loopback are always the job's to reach.
//!
//! This module must never let a name lead to an address it did not check: the proxy connects to
//! exactly the addresses `resolve` returns, never resolving again.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use crate::sandbox::policy::Destination;

/// What the proxy may reach for one job.
#[derive(Debug, Clone)]
pub struct AllowList {
    pub destinations: Vec<Destination>,
    pub allow_local: bool,
    /// The job's own ports (its `ISOLATE_PORT` block), reachable on loopback by name or address.
    pub own: Vec<u16>,
    /// The proxy's own address: never a destination (a request to itself would loop).
    pub proxy: Option<SocketAddr>,
}

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
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Grant::Listed => "in the allowlist",
            Grant::Own => "the job's own port",
        })
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
        if self.own.contains(&port) && loopback_name(host) {
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
        let found: Vec<SocketAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => (host, port)
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

/// `localhost` or a loopback address literal.
fn loopback_name(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| unmapped(ip).is_loopback())
}

fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// An address of this machine, its networks, or the cloud's metadata service: the addresses a
/// name under an attacker's control could point the proxy at to reach what the job may not.
pub fn local(ip: IpAddr) -> bool {
    match unmapped(ip) {
        IpAddr::V4(v4) => local_v4(v4),
        IpAddr::V6(v6) => local_v6(v6),
    }
}

fn local_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254.0.0/16: the metadata service of AWS, GCP, Azure
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (Alibaba's metadata)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking networks
        || a >= 240
}

fn local_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    // NAT64 (64:ff9b::/96) embeds an IPv4 address: judged as that address.
    if ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let o = ip.octets();
        return local_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local (fd00:ec2::254: AWS's metadata)
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local, deprecated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str], allow_local: bool) -> AllowList {
        AllowList {
            destinations: entries.iter().map(|e| e.parse().unwrap()).collect(),
            allow_local,
            own: vec![20000],
            proxy: Some("127.0.0.1:3128".parse().unwrap()),
        }
    }

    #[test]
    fn names_wildcards_and_ports() {
        let l = list(
            &[
                "api.anthropic.com",
                "*.github.com",
                "registry.npmjs.org:8443",
            ],
            false,
        );
        assert_eq!(l.check("api.anthropic.com", 443), Ok(Grant::Listed));
        assert_eq!(l.check("api.anthropic.com", 80), Ok(Grant::Listed));
        assert_eq!(l.check("api.anthropic.com", 22), Err(Refusal::NotListed));
        assert_eq!(l.check("codeload.github.com", 443), Ok(Grant::Listed));
        assert_eq!(l.check("github.com", 443), Err(Refusal::NotListed));
        assert_eq!(l.check("evilgithub.com", 443), Err(Refusal::NotListed));
        assert_eq!(l.check("registry.npmjs.org", 8443), Ok(Grant::Listed));
        assert_eq!(l.check("registry.npmjs.org", 443), Err(Refusal::NotListed));
        assert_eq!(l.check("localhost", 20000), Ok(Grant::Own));
        assert_eq!(l.check("127.0.0.1", 20000), Ok(Grant::Own));
        assert_eq!(l.check("localhost", 20001), Err(Refusal::NotListed));
    }

    #[test]
    fn local_addresses_are_refused_unless_allowed() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "::1",
            "::",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:127.0.0.1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(local(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "1.1.1.1"] {
            assert!(!local(ip.parse().unwrap()), "{ip}");
        }
        let strict = list(&["localhost:8080"], false);
        assert!(matches!(
            strict.resolve("127.0.0.1", 8080, Grant::Listed),
            Err(Refusal::Local(_))
        ));
        let open = list(&["localhost:8080"], true);
        assert!(open.resolve("127.0.0.1", 8080, Grant::Listed).is_ok());
        assert_eq!(
            open.resolve("127.0.0.1", 3128, Grant::Listed),
            Err(Refusal::Loop)
        );
    }
}
