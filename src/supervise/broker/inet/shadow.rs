//! A localhost service of someone else's on the other family: a job that listens on `[::1]:P`
//! beside a user's server on `127.0.0.1:P` (or the other way round) is reached by every client
//! that resolves `localhost` to its family first, and the kernel sees no conflict (two families,
//! two addresses). The listeners there are read from `/proc/net/tcp` and `/proc/net/tcp6`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::supervise::broker::listeners::{held_by_job, Members};

/// `TCP_LISTEN` as `/proc/net/tcp` writes a socket's state.
const LISTEN: &str = "0A";

/// Whether a job listening on `local`:`port` would take the clients of a listener that is not the
/// job's: one on `port` of the other family's loopback or wildcard address. Only an address
/// `localhost` reaches (a loopback or a wildcard one) can; `None` when the kernel's tables cannot
/// be read.
pub(super) fn shadows(local: IpAddr, port: u16, members: &Members) -> Option<bool> {
    if !(local.is_loopback() || local.is_unspecified()) {
        return Some(false);
    }
    let (table, v6) = match local {
        IpAddr::V4(_) => ("/proc/net/tcp6", true),
        IpAddr::V6(_) => ("/proc/net/tcp", false),
    };
    let mut others = listeners(table, v6)?;
    if !v6 {
        // An IPv6 socket bound to an IPv4-mapped address is an IPv4 listener.
        let mapped = listeners("/proc/net/tcp6", true)?;
        others.extend(mapped.into_iter().filter(|(ip, ..)| ip.is_ipv4()));
    } else {
        others.retain(|(ip, ..)| ip.is_ipv6());
    }
    Some(
        others
            .into_iter()
            .filter(|(ip, at, _)| *at == port && (ip.is_loopback() || ip.is_unspecified()))
            .any(|(.., inode)| !u32::try_from(inode).is_ok_and(|i| held_by_job(i, members))),
    )
}

/// The listeners of one table: address (an IPv4-mapped one as IPv4), port and socket inode. A
/// table that is not there (IPv6 off) has none; one that cannot be read or parsed is `None`.
fn listeners(table: &str, v6: bool) -> Option<Vec<(IpAddr, u16, u64)>> {
    let text = match std::fs::read_to_string(table) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(state), Some(inode)) = (fields.get(1), fields.get(3), fields.get(9))
        else {
            return None;
        };
        if *state != LISTEN {
            continue;
        }
        let (addr, port) = local.split_once(':')?;
        let ip = address(addr, v6)?;
        out.push((ip, u16::from_str_radix(port, 16).ok()?, inode.parse().ok()?));
    }
    Some(out)
}

/// An address as the tables write it: each 32-bit word of it in hex, as the machine holds it.
fn address(hex: &str, v6: bool) -> Option<IpAddr> {
    let words = (0..hex.len() / 8)
        .map(|i| u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok())
        .collect::<Option<Vec<u32>>>()?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    match (v6, bytes.len()) {
        (false, 4) => Some(IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?))),
        (true, 16) => {
            let v6 = Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?);
            Some(match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(v6),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables' own spelling, read back: on this machine, `127.0.0.1` and `::1` as the kernel
    /// writes them for a listener of each.
    #[test]
    fn addresses_are_read_as_the_kernel_writes_them() {
        let v4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = v4.local_addr().unwrap().port();
        let found = listeners("/proc/net/tcp", false).unwrap();
        assert!(
            found
                .iter()
                .any(|(ip, p, _)| *p == port && *ip == Ipv4Addr::LOCALHOST),
            "{found:?}"
        );
        if let Ok(v6) = std::net::TcpListener::bind("[::1]:0") {
            let port = v6.local_addr().unwrap().port();
            let found = listeners("/proc/net/tcp6", true).unwrap();
            assert!(found
                .iter()
                .any(|(ip, p, _)| *p == port && *ip == Ipv6Addr::LOCALHOST));
        }
        assert_eq!(
            address("00000000", false),
            Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        );
    }
}
