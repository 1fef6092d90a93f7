//! A job's connect on an inet socket, and its listen(2) where TCP bind is restricted. The broker
//! makes the connection itself (the job's Landlock TCP rule never sees it), so it holds the connect
//! to the policy's ports here, as Landlock would: a TCP connect to a port the policy does not list
//! is refused with EACCES. UDP sockets exist only where the policy allows UDP (the filter refuses
//! the rest), and their connects are the kernel's. A netlink socket may connect to the kernel only:
//! a port of another process is a door the broker's own rights must not open.

use std::os::fd::{AsRawFd, OwnedFd};

use crate::sandbox::notify::Answer;
use crate::sandbox::plan::Sockets;
use crate::supervise::broker::connection::option;
use crate::supervise::broker::Verdict;

/// The port of an AF_INET or AF_INET6 address (the same offset in both), if it is one.
fn port(addr: &[u8]) -> Option<u16> {
    let family = u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]);
    let inet = family == libc::AF_INET as u16 || family == libc::AF_INET6 as u16;
    (inet && addr.len() >= 4).then(|| u16::from_be_bytes([addr[2], addr[3]]))
}

/// The verdict on connecting `socket` (AF_INET or AF_INET6) to `addr`.
pub fn connect(sockets: &Sockets, socket: &OwnedFd, addr: &[u8]) -> Verdict {
    let Some(allowed) = &sockets.tcp_connect else {
        return Verdict::Connect;
    };
    let stream = option(socket, libc::SO_TYPE) == Ok(libc::SOCK_STREAM);
    match (stream, port(addr)) {
        (true, Some(port)) if !allowed.contains(&port) => Verdict::Refused,
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
/// every address by itself, past Landlock's bind rule. Everything else listens as asked.
pub fn listen(socket: &OwnedFd, backlog: u64) -> Verdict {
    let family = option(socket, libc::SO_DOMAIN);
    let inet = matches!(family, Ok(libc::AF_INET) | Ok(libc::AF_INET6));
    if inet && bound_port(socket) == Some(0) {
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

/// The local port of an inet socket (0 when it is not bound).
fn bound_port(socket: &OwnedFd) -> Option<u16> {
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
    port(bytes)
}
