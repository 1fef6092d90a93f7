//! bind(2) of a UDP socket, which serves as soon as it is bound (no `listen` to judge it on): a
//! job never binds where `localhost` reaches (a loopback or wildcard address) on a port a UDP
//! server of someone else's holds on the other family (shadow.rs), refused with `EADDRINUSE` as
//! the listen of a TCP socket is.
//!
//! The broker makes an allowed UDP bind itself, on the address it read and checked: were the
//! kernel to make it (`CONTINUE`), it would read the address again, and a second thread of the
//! job could swap `[::1]:P` in after the check (a review won that race within 1-525 binds). No
//! layer of the job's is skipped so: Landlock has no rule on UDP (through ABI 7; a kernel with a
//! later ABI gets `CONTINUE`), a seccomp filter of the job's own that refuses the call answers
//! before this one is asked, and the broker's thread has no capability the job lacks (both have
//! none: a port below `ip_unprivileged_port_start` is refused to either). Every other inet bind
//! is the kernel's to make (`CONTINUE`), under the caller's whole Landlock domain. A port the
//! kernel draws for a socket bound to port 0, or sending unbound, is not checked
//! (SECURITY.md, "Eleventh look").

use std::net::{IpAddr, Ipv4Addr};
use std::os::fd::{AsRawFd, OwnedFd};

use super::shadow::shadows;
use super::{ip, port};
use crate::sandbox::notify::Answer;
use crate::sandbox::probe::kernel_abi;
use crate::supervise::broker::connection::option;
use crate::supervise::broker::listeners::{Members, Server};
use crate::supervise::broker::{errno, Verdict};

/// The verdict on binding `socket` (AF_INET or AF_INET6) to `addr` (read once).
pub fn bind(socket: &OwnedFd, addr: &[u8], members: &Members) -> Verdict {
    let udp = option(socket, libc::SO_PROTOCOL) == Ok(libc::IPPROTO_UDP);
    let inet4 = option(socket, libc::SO_DOMAIN) == Ok(libc::AF_INET);
    let checked = match (udp, address(addr, inet4), port_of(addr)) {
        (true, Some(ip), Some(port @ 1..)) => shadows(Server::Udp, ip, port, members),
        _ => Some(false),
    };
    match checked {
        Some(false) if udp && unruled() => Verdict::Done(bound(socket, addr)),
        Some(false) => Verdict::Done(Answer::Continue),
        Some(true) => Verdict::RefusedAs(libc::EADDRINUSE),
        // The kernel's tables cannot be read: nothing can tell.
        None => Verdict::Refused,
    }
}

/// The last Landlock ABI with no rule on UDP.
const UDP_UNRULED_ABI: u32 = 7;

/// Whether nothing of Landlock's judges a UDP bind on this kernel (its ABI, or none at all).
fn unruled() -> bool {
    static ABI: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    ABI.get_or_init(|| kernel_abi().ok())
        .map_or(true, |abi| abi <= UDP_UNRULED_ABI)
}

/// `bind(socket, addr)` made here, its result as the job's call returns it.
fn bound(socket: &OwnedFd, addr: &[u8]) -> Answer {
    // SAFETY: `addr` is valid for its length; bind only reads it.
    let rc = unsafe {
        libc::bind(
            socket.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    };
    match rc {
        0 => Answer::Value(0),
        _ => Answer::Errno(errno()),
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
