//! bind(2) of a UDP socket, which serves as soon as it is bound (no `listen` to judge it on): a
//! job never binds where `localhost` reaches (a loopback or wildcard address) on a port a UDP
//! server of someone else's holds on the other family (shadow.rs), refused with `EADDRINUSE` as
//! the listen of a TCP socket is. Every other bind is the kernel's to make (`CONTINUE`), under the
//! caller's whole Landlock domain. The kernel reads the address again, so a second thread of the
//! job can swap another in after the check (SECURITY.md, "Eleventh look").

use std::net::{IpAddr, Ipv4Addr};
use std::os::fd::OwnedFd;

use super::shadow::shadows;
use super::{ip, port};
use crate::sandbox::notify::Answer;
use crate::supervise::broker::connection::option;
use crate::supervise::broker::listeners::{Members, Server};
use crate::supervise::broker::Verdict;

/// The verdict on binding `socket` (AF_INET or AF_INET6) to `addr` (read once).
pub fn bind(socket: &OwnedFd, addr: &[u8], members: &Members) -> Verdict {
    let udp = option(socket, libc::SO_PROTOCOL) == Ok(libc::IPPROTO_UDP);
    let inet4 = option(socket, libc::SO_DOMAIN) == Ok(libc::AF_INET);
    match (udp, address(addr, inet4), port_of(addr)) {
        (true, Some(ip), Some(port @ 1..)) => match shadows(Server::Udp, ip, port, members) {
            Some(false) => Verdict::Done(Answer::Continue),
            Some(true) => Verdict::RefusedAs(libc::EADDRINUSE),
            // The kernel's tables cannot be read: nothing can tell.
            None => Verdict::Refused,
        },
        _ => Verdict::Done(Answer::Continue),
    }
}

/// The address a bind of an AF_INET socket (`inet4`) or an AF_INET6 one names: the kernel takes
/// an `AF_UNSPEC` one on an AF_INET socket for `0.0.0.0` (its "compatibility games"; it refuses
/// any other address of that family).
fn address(addr: &[u8], inet4: bool) -> Option<IpAddr> {
    match family(addr)? as i32 {
        libc::AF_UNSPEC if inet4 => Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        _ => ip(addr),
    }
}

/// The port an inet bind names, of an `AF_UNSPEC` address too (the same offset).
fn port_of(addr: &[u8]) -> Option<u16> {
    match family(addr)? as i32 {
        libc::AF_UNSPEC => Some(u16::from_be_bytes([*addr.get(2)?, *addr.get(3)?])),
        _ => port(addr),
    }
}

fn family(addr: &[u8]) -> Option<u16> {
    Some(u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unspecified_family_on_an_inet_socket_is_the_wildcard_address() {
        let mut unspec = (libc::AF_UNSPEC as u16).to_ne_bytes().to_vec();
        unspec.extend(5304u16.to_be_bytes());
        unspec.extend([0u8; 12]);
        let any = IpAddr::V4(Ipv4Addr::UNSPECIFIED);
        assert_eq!(
            (address(&unspec, true), port_of(&unspec)),
            (Some(any), Some(5304))
        );
        assert_eq!(
            address(&unspec, false),
            None,
            "an AF_INET6 socket refuses it"
        );
    }
}
