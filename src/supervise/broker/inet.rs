//! A job's connect on an inet socket, and its listen(2) where TCP bind is restricted. The broker
//! makes the connection itself (the job's Landlock TCP rule never sees it), so it holds the connect
//! to the policy's ports here, as Landlock would: a TCP connect to a port the policy does not list
//! is refused with EACCES. Under a domain allowlist it holds the address too (Landlock matches a
//! port, never an address): the proxy's exact address, or a loopback address on one of the job's
//! own ports, and nothing else, so a listener of someone else on the proxy's port of another
//! loopback address is out of reach. UDP sockets exist only where the policy allows UDP (the
//! filter refuses the rest), and their connects are the kernel's. A netlink socket may connect to
//! the kernel only: a port of another process is a door the broker's own rights must not open.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsRawFd, OwnedFd};

use crate::sandbox::notify::Answer;
use crate::sandbox::plan::{Route, Sockets};
use crate::supervise::broker::connection::option;
use crate::supervise::broker::Verdict;

/// The port of an AF_INET or AF_INET6 address (the same offset in both), if it is one.
fn port(addr: &[u8]) -> Option<u16> {
    let family = u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]);
    let inet = family == libc::AF_INET as u16 || family == libc::AF_INET6 as u16;
    (inet && addr.len() >= 4).then(|| u16::from_be_bytes([addr[2], addr[3]]))
}

/// The address of an AF_INET or AF_INET6 socket address, if it is one (an IPv4-mapped IPv6
/// address as the IPv4 address it reaches).
fn ip(addr: &[u8]) -> Option<IpAddr> {
    let family = u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]);
    if family == libc::AF_INET as u16 {
        let octets: [u8; 4] = addr.get(4..8)?.try_into().ok()?;
        return Some(IpAddr::V4(Ipv4Addr::from(octets)));
    }
    if family == libc::AF_INET6 as u16 {
        // struct sockaddr_in6: family, port, flowinfo (4 bytes), then the address.
        let octets: [u8; 16] = addr.get(8..24)?.try_into().ok()?;
        let v6 = Ipv6Addr::from(octets);
        return Some(match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        });
    }
    None
}

/// A TCP connect to `ip`:`port` is one a job with a domain allowlist may make.
fn routed(route: &Route, ip: IpAddr, port: u16) -> bool {
    let proxy = route.proxy == Some(port) && ip == IpAddr::V4(Ipv4Addr::LOCALHOST);
    proxy || (ip.is_loopback() && route.own.contains(&port))
}

/// The verdict on connecting `socket` (AF_INET or AF_INET6) to `addr`.
pub fn connect(sockets: &Sockets, socket: &OwnedFd, addr: &[u8]) -> Verdict {
    let Some(allowed) = &sockets.tcp_connect else {
        return Verdict::Connect;
    };
    let stream = option(socket, libc::SO_TYPE) == Ok(libc::SOCK_STREAM);
    match (stream, port(addr), &sockets.route) {
        (true, Some(port), Some(route)) => match ip(addr) {
            Some(ip) if routed(route, ip, port) => Verdict::Connect,
            _ => Verdict::Refused,
        },
        (true, Some(port), None) if !allowed.contains(&port) => Verdict::Refused,
        _ => Verdict::Connect,
    }
}

/// The verdict on connecting a netlink socket to `addr`: the kernel (port 0, no groups) only.
pub fn connect_netlink(addr: &[u8]) -> Verdict {
    // struct sockaddr_nl: family, pad, port (u32), groups (u32).
    let to_kernel = addr.len() >= 12 && addr[4..12].iter().all(|&b| b == 0);
    match to_kernel {
        true => Verdict::Connect,
        false => Verdict::Done(Answer::Errno(libc::EPERM)),
    }
}

/// listen(2) where TCP bind is restricted: a TCP socket that was never bound would bind a port on
/// every address by itself, past Landlock's bind rule. Under a domain allowlist a job listens on
/// loopback only (an address it bound, as the kernel holds it, so nothing it changes later
/// counts): a server on 0.0.0.0 would let anyone on the network in, past the proxy. Everything
/// else listens as asked.
pub fn listen(sockets: &Sockets, socket: &OwnedFd, backlog: u64) -> Verdict {
    let family = option(socket, libc::SO_DOMAIN);
    let inet = matches!(family, Ok(libc::AF_INET) | Ok(libc::AF_INET6));
    let local = bound(socket);
    if inet && local.as_deref().and_then(port) == Some(0) {
        return Verdict::Refused;
    }
    let loopback = local
        .as_deref()
        .and_then(ip)
        .is_some_and(|ip| ip.is_loopback());
    if inet && sockets.route.is_some() && !loopback {
        return Verdict::Refused;
    }
    // The kernel reads backlog as an int.
    let backlog = backlog as u32 as libc::c_int;
    // SAFETY: listen on a descriptor the broker owns.
    let rc = unsafe { libc::listen(socket.as_raw_fd(), backlog) };
    Verdict::Done(if rc == 0 {
        Answer::Value(0)
    } else {
        Answer::Errno(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        )
    })
}

/// The local address of a socket, as the kernel holds it.
fn bound(socket: &OwnedFd) -> Option<Vec<u8>> {
    // SAFETY: sockaddr_storage is plain data; getsockname fills at most `len` bytes.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: as above.
    let rc = unsafe {
        libc::getsockname(
            socket.as_raw_fd(),
            (&mut addr as *mut libc::sockaddr_storage).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: `addr` is at least as large as the address getsockname wrote.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&addr as *const libc::sockaddr_storage).cast::<u8>(),
            len as usize,
        )
    };
    Some(bytes.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: [u8; 4], port: u16) -> Vec<u8> {
        let mut addr = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        addr.extend(port.to_be_bytes());
        addr.extend(a);
        addr.extend([0u8; 8]);
        addr
    }

    fn v6(a: Ipv6Addr, port: u16) -> Vec<u8> {
        let mut addr = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        addr.extend(port.to_be_bytes());
        addr.extend([0u8; 4]);
        addr.extend(a.octets());
        addr.extend([0u8; 4]);
        addr
    }

    #[test]
    fn under_an_allowlist_only_the_proxy_and_the_jobs_own_ports_are_reachable() {
        let route = Route {
            proxy: Some(3128),
            own: vec![20000, 20001],
        };
        let check = |addr: Vec<u8>| routed(&route, ip(&addr).unwrap(), port(&addr).unwrap());
        assert!(check(v4([127, 0, 0, 1], 3128)));
        assert!(!check(v4([127, 0, 0, 2], 3128)), "another loopback address");
        assert!(
            !check(v6(Ipv6Addr::LOCALHOST, 3128)),
            "the proxy is on 127.0.0.1 only"
        );
        assert!(check(v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), 3128)));
        assert!(check(v4([127, 0, 0, 1], 20001)));
        assert!(check(v6(Ipv6Addr::LOCALHOST, 20000)));
        assert!(!check(v4([127, 0, 0, 1], 20002)), "someone else's port");
        assert!(!check(v4([10, 0, 0, 1], 20000)), "not loopback");
        assert!(!check(v4([93, 184, 216, 34], 443)));
        let unstarted = Route {
            proxy: None,
            own: Vec::new(),
        };
        let addr = v4([127, 0, 0, 1], 3128);
        assert!(!routed(&unstarted, ip(&addr).unwrap(), 3128));
    }
}
