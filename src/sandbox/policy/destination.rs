//! One entry of `[network] allow`: a host name, or every name beneath a domain, with its port.
//! Refuses anything that is not a host name (a URL, a path, `*` alone), saying what it is.

use std::fmt;
use std::net::IpAddr;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A host name the proxy may reach: exactly, or every name beneath a domain (`*.github.com`,
/// which is not `github.com` itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Exact(String),
    /// The suffix, with its leading dot (`.github.com`).
    Beneath(String),
    /// An address (`127.0.0.1`, `[::1]`), an IPv4 address mapped into IPv6 as the IPv4 one.
    Address(IpAddr),
}

/// One entry of `[network] allow`: `name`, `*.domain`, either with `:port` (without one: 443 and
/// 80). Names are kept in lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub host: Host,
    pub port: Option<u16>,
}

impl Destination {
    /// The ports an entry without one allows.
    pub const DEFAULT_PORTS: [u16; 2] = [443, 80];

    /// `host` (lowercase, without a trailing dot) on `port` is this entry's.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(p) => p == port,
            None => Self::DEFAULT_PORTS.contains(&port),
        };
        port_ok
            && match &self.host {
                Host::Exact(name) => name == host,
                Host::Beneath(suffix) => {
                    host.len() > suffix.len() && host.ends_with(suffix.as_str())
                }
                Host::Address(ip) => host.parse::<IpAddr>().is_ok_and(|h| unmapped(h) == *ip),
            }
    }
}

/// An IPv4 address mapped into IPv6 as the IPv4 address it is.
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl std::str::FromStr for Destination {
    type Err = Error;

    /// A host name (letters, digits, `-` in dot-separated labels of at most 63), optionally `*.`
    /// before it and `:port` after it; anything else (a URL, a path, `*`, an address with `/`) is
    /// refused, saying what it is.
    fn from_str(entry: &str) -> Result<Destination> {
        let bad = |why: &'static str| Error::NotAHostName {
            entry: entry.to_string(),
            why,
        };
        if let Some(address) = address(entry)? {
            return Ok(address);
        }
        let (name, port) = match entry.rsplit_once(':') {
            Some((name, port)) => {
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| {
                        bad("expected NAME or NAME:PORT (a URL? write only its host)")
                    })?;
                (name, Some(port))
            }
            None => (entry, None),
        };
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        let (wildcard, rest) = match name.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, name.as_str()),
        };
        if rest.is_empty() || rest == "*" {
            return Err(bad("a name is needed (`*` alone would allow every host)"));
        }
        if rest.len() > 253 {
            return Err(bad("longer than 253 characters"));
        }
        for label in rest.split('.') {
            let fine = !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if !fine {
                return Err(bad(
                    "expected letters, digits and - in dot-separated labels, optionally *. before and :PORT after",
                ));
            }
        }
        if wildcard && !rest.contains('.') {
            return Err(bad(
                "a wildcard needs a domain of two labels at least (*.example.com)",
            ));
        }
        let host = match wildcard {
            true => Host::Beneath(format!(".{rest}")),
            false => Host::Exact(rest.to_string()),
        };
        Ok(Destination { host, port })
    }
}

/// An entry that names an address: `127.0.0.1`, `10.1.2.3:8080`, `[::1]:11434` (a bare IPv6
/// address, which has colons of its own, takes no port); `None` for a name.
fn address(entry: &str) -> Result<Option<Destination>> {
    let bad = |why: &'static str| Error::NotAHostName {
        entry: entry.to_string(),
        why,
    };
    let (text, port) = if let Some(rest) = entry.strip_prefix('[') {
        let (ip, after) = rest
            .split_once(']')
            .ok_or_else(|| bad("an IPv6 address is written [ADDRESS] or [ADDRESS]:PORT"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .and_then(|p| p.parse::<u16>().ok())
                    .filter(|p| *p != 0)
                    .ok_or_else(|| bad("expected [ADDRESS]:PORT"))?,
            ),
        };
        (ip, port)
    } else if entry.parse::<IpAddr>().is_ok() {
        (entry, None)
    } else {
        match entry.rsplit_once(':') {
            Some((ip, port)) if ip.parse::<std::net::Ipv4Addr>().is_ok() => (
                ip,
                Some(
                    port.parse::<u16>()
                        .ok()
                        .filter(|p| *p != 0)
                        .ok_or_else(|| bad("expected ADDRESS:PORT"))?,
                ),
            ),
            _ => return Ok(None),
        }
    };
    let ip: IpAddr = text
        .parse()
        .map_err(|_| bad("expected an IPv4 address, or an IPv6 address in brackets"))?;
    Ok(Some(Destination {
        host: Host::Address(unmapped(ip)),
        port,
    }))
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Host::Exact(name) => f.write_str(name)?,
            Host::Beneath(suffix) => write!(f, "*{suffix}")?,
            Host::Address(IpAddr::V4(ip)) => write!(f, "{ip}")?,
            Host::Address(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

impl Serialize for Destination {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Destination {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(de::Error::custom)
    }
}
