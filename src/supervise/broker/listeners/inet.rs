//! The TCP listeners of one family, by sock_diag (`NETLINK_SOCK_DIAG`, `inet_diag_req_v2` asking
//! for the listening state alone, so the kernel walks its listening hash only: reading
//! `/proc/net/tcp6` walks every bucket of the established hash too, milliseconds on a large
//! machine, once per listen); and the UDP sockets of one family, which serve without listening.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::diag::{dump, header};
use super::members::{held_by_job, Members};

const TCP_LISTEN: u32 = 10;
/// An unconnected UDP socket's state (`TCP_CLOSE`): one that receives from anyone.
const UDP_UNCONNECTED: u32 = 7;
/// struct inet_diag_req_v2.
const REQUEST: usize = 56;
/// struct inet_diag_msg.
const MSG: usize = 72;

/// One server (a TCP listener, a UDP socket): its address (an IPv4-mapped one as the IPv4 address), port and socket inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listening {
    pub ip: IpAddr,
    pub port: u16,
    pub socket: u32,
}

/// What serves on a port: a TCP listener, or an unconnected UDP socket (bound, it receives what
/// anyone sends to its address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Tcp,
    Udp,
}

/// Every server of kind `server` of `family` (`AF_INET` or `AF_INET6`) in this network namespace.
pub fn servers(server: Server, family: i32) -> std::io::Result<Vec<Listening>> {
    let (protocol, state) = match server {
        Server::Tcp => (libc::IPPROTO_TCP, TCP_LISTEN),
        Server::Udp => (libc::IPPROTO_UDP, UDP_UNCONNECTED),
    };
    let mut request = header(REQUEST);
    // family, protocol, extensions wanted (none), pad, states, then a zero inet_diag_sockid.
    request.extend_from_slice(&[family as u8, protocol as u8, 0, 0]);
    request.extend_from_slice(&(1u32 << state).to_ne_bytes());
    request.extend_from_slice(&[0; REQUEST - 8]);
    dump(&request, parse)
}

/// Whether a listener that is not the job's holds `port` where `localhost` reaches (a loopback or
/// wildcard address, of either family); `None` when the kernel cannot say. A port of a job's
/// block is the job's by its lock, not in the kernel: a server of the user's, or another user's,
/// may be listening there (the broker's connects under an allowlist, and the proxy's).
pub fn others_listen(port: u16, members: &Members) -> Option<bool> {
    let mut all = listening(libc::AF_INET)?;
    all.extend(listening(libc::AF_INET6)?);
    Some(all.iter().any(|l| {
        l.port == port
            && (l.ip.is_loopback() || l.ip.is_unspecified())
            && !held_by_job(l.socket, members)
    }))
}

/// The TCP listeners of `family`; none where the kernel has no such family (IPv6 off); `None`
/// when the kernel cannot say.
pub fn listening(family: i32) -> Option<Vec<Listening>> {
    serving(Server::Tcp, family)
}

/// The servers of kind `server` of `family`; none where the kernel has no such family (IPv6 off);
/// `None` when the kernel cannot say.
pub fn serving(server: Server, family: i32) -> Option<Vec<Listening>> {
    match servers(server, family) {
        Ok(found) => Some(found),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Some(Vec::new()),
        Err(_) => None,
    }
}

/// One `inet_diag_msg`: family, state, timer, retransmits, then the socket's id (source port and
/// destination port in network order, source and destination addresses, interface, cookie), and
/// after the expiry, the queues and the uid, its inode.
fn parse(msg: &[u8]) -> Option<Listening> {
    if msg.len() < MSG {
        return None;
    }
    let port = u16::from_be_bytes([msg[4], msg[5]]);
    let ip = match msg[0] as i32 {
        libc::AF_INET => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(&msg[8..12]).ok()?)),
        libc::AF_INET6 => {
            let v6 = Ipv6Addr::from(<[u8; 16]>::try_from(&msg[8..24]).ok()?);
            match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(v6),
            }
        }
        _ => return None,
    };
    let socket = u32::from_ne_bytes(msg[68..72].try_into().ok()?);
    Some(Listening { ip, port, socket })
}
