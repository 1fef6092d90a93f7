//! A job's connect on an inet socket, and its listen(2). The broker
//! makes the connection itself (the job's Landlock TCP rule never sees it), so it holds the connect
//! to the policy's ports here, as Landlock would: a TCP connect to a port the policy does not list
//! is refused with EACCES. Under a domain allowlist it holds the address too (Landlock matches a
//! port, never an address): the proxy's exact address, or a loopback address on one of the job's
//! own ports where only the job listens, and nothing else, so a listener of someone else on the
//! proxy's port of another loopback address, or on a port of the job's block, is out of reach. UDP sockets exist only where the policy allows UDP (the
//! filter refuses the rest), and their connects are the kernel's. A netlink socket may connect to
//! the kernel only: a port of another process is a door the broker's own rights must not open.

mod bind;
mod listen;
mod reuse;
mod shadow;
#[cfg(test)]
mod tests;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::OwnedFd;

use crate::sandbox::notify::Answer;
use crate::sandbox::plan::{Route, Sockets};
use crate::supervise::broker::connection::option;
use crate::supervise::broker::listeners::{others_listen, Members};
use crate::supervise::broker::Verdict;

pub use bind::bind;
pub use listen::listen;
pub use reuse::reuse_address;

/// The port of an AF_INET or AF_INET6 address (the same offset in both), if it is one.
pub(super) fn port(addr: &[u8]) -> Option<u16> {
    let family = u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]);
    let inet = family == libc::AF_INET as u16 || family == libc::AF_INET6 as u16;
    (inet && addr.len() >= 4).then(|| u16::from_be_bytes([addr[2], addr[3]]))
}

/// The address of an AF_INET or AF_INET6 socket address, if it is one (an IPv4-mapped IPv6
/// address as the IPv4 address it reaches).
pub(super) fn ip(addr: &[u8]) -> Option<IpAddr> {
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

/// A TCP connect to `ip`:`port` is one a job with a domain allowlist may make: to the proxy, or
/// to a loopback address on a port of the job's block that no listener but the job's holds where
/// `localhost` reaches (a port of the block is the job's by its lock, not in the kernel: a
/// server of the user's, or another user's, may be listening there).
fn routed(route: &Route, ip: IpAddr, port: u16, members: &Members) -> Verdict {
    let proxy = route.proxy == Some(port) && ip == IpAddr::V4(Ipv4Addr::LOCALHOST);
    let named = route.named.iter().any(|a| a.ip() == ip && a.port() == port);
    if proxy || named {
        return Verdict::Connect;
    }
    // The job's own servers on any loopback port: one only the job listens on (its block's ports
    // are its by their lock, the rest by who listens there now).
    match ip.is_loopback() && others_listen(port, members) == Some(false) {
        true => Verdict::ConnectOwn(port),
        false => Verdict::Refused,
    }
}

/// The verdict on connecting `socket` (AF_INET or AF_INET6) to `addr`.
pub fn connect(sockets: &Sockets, socket: &OwnedFd, addr: &[u8], members: &Members) -> Verdict {
    let Some(allowed) = &sockets.tcp_connect else {
        return Verdict::Connect;
    };
    let stream = option(socket, libc::SO_TYPE) == Ok(libc::SOCK_STREAM);
    match (stream, port(addr), &sockets.route) {
        (true, Some(port), Some(route)) => match ip(addr) {
            Some(ip) => routed(route, ip, port, members),
            None => Verdict::Refused,
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
