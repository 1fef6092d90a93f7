//! The `[network]` section of a merged policy: TCP ports, UDP, unix sockets and the domain
//! allowlist, with the values `all`, `none` or a list of ports as TOML writes them.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::{Destination, PathRule};

/// What the job's sockets may reach. TCP ports are Landlock rules (ABI 4) and checked again by the
/// seccomp layer on every connect it makes for the job; UDP, unix sockets and the protocols that
/// slip past Landlock's TCP hooks are the seccomp layer's (sandbox/seccomp/).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    pub connect: Ports,
    pub bind: Ports,
    /// UDP (DNS included): `all` or `none`.
    pub udp: Reach,
    /// Path-named unix sockets served from outside the job that it may connect to: a socket file,
    /// or a directory (every socket beneath it). The job's own sockets need no rule.
    pub unix_sockets: Vec<PathRule>,
    /// Datagram unix sockets. A datagram socket names its destination on every send, which the
    /// kernel (before Landlock ABI 9) lets no filter check, so `all` opens every datagram listener
    /// on the machine (a gap); `none` refuses creating them.
    pub unix_datagram: Reach,
    /// The domain allowlist. Not empty: the job's TCP goes through isolate's proxy (its only TCP
    /// destination besides the job's own ports), which reaches these names only; `connect` is then
    /// replaced by the proxy's port and UDP is refused (the proxy resolves names).
    pub allow: Vec<Destination>,
    /// The proxy may reach loopback, private and link-local addresses a name resolves to (a local
    /// registry mirror, tests); off by default, so that an allowed name cannot lead to the cloud's
    /// metadata service or a service on the machine.
    pub allow_local: bool,
}

impl Network {
    /// The job's TCP goes through isolate's proxy.
    pub fn proxied(&self) -> bool {
        !self.allow.is_empty()
    }
}

impl Default for Network {
    fn default() -> Self {
        Network {
            connect: Ports::All,
            bind: Ports::All,
            udp: Reach::All,
            unix_sockets: Vec::new(),
            unix_datagram: Reach::None,
            allow: Vec::new(),
            allow_local: false,
        }
    }
}

/// `"all"` or `"none"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    #[default]
    All,
    None,
}

impl Reach {
    pub fn allowed(self) -> bool {
        self == Reach::All
    }
}

impl fmt::Display for Reach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reach::All => "all",
            Reach::None => "none",
        })
    }
}

/// `"all"`, `"none"`, or a list of ports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Ports {
    #[default]
    All,
    Only(Vec<u16>),
}

impl Ports {
    /// The ports allowed, `None` when the policy does not restrict them.
    pub fn allowed(&self) -> Option<&[u16]> {
        match self {
            Ports::All => None,
            Ports::Only(ports) => Some(ports),
        }
    }
}

impl fmt::Display for Ports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ports::All => f.write_str("all"),
            Ports::Only(ports) if ports.is_empty() => f.write_str("none"),
            Ports::Only(ports) => {
                let shown: Vec<String> = ports.iter().map(u16::to_string).collect();
                f.write_str(&shown.join(", "))
            }
        }
    }
}

impl Serialize for Ports {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Ports::All => s.serialize_str("all"),
            Ports::Only(ports) if ports.is_empty() => s.serialize_str("none"),
            Ports::Only(ports) => ports.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Ports {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ports;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"all\", \"none\" or a list of TCP ports")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Ports, E> {
                match s {
                    "all" => Ok(Ports::All),
                    "none" => Ok(Ports::Only(Vec::new())),
                    _ => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Ports, A::Error> {
                let mut ports = Vec::new();
                while let Some(port) = seq.next_element::<u16>()? {
                    if !ports.contains(&port) {
                        ports.push(port);
                    }
                }
                Ok(Ports::Only(ports))
            }
        }
        d.deserialize_any(V)
    }
}
