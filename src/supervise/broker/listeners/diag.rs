//! A sock_diag dump: the request written by hand, the replies walked message by message. A reply
//! it cannot read fails the dump, never yields a guess. Of every bound unix socket here; of the
//! TCP listeners, inet.rs.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::parse::{align, parse};
use super::Bound;
use crate::supervise::namespaces::Holder;

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;

const UDIAG_SHOW_NAME: u32 = 1;
const UDIAG_SHOW_VFS: u32 = 2;
/// struct nlmsghdr.
const NLMSG_HDR: usize = 16;

/// Every bound unix socket of this network namespace (listening or not: a bound socket that has
/// not called listen() yet will be served by whoever bound it).
/// A path-named socket is reached by its file whatever network namespace serves it: where the job
/// has one of its own, the machine's sockets are listed too, so that a listener of someone
/// else's is seen (and refused) rather than missed.
pub fn bound() -> std::io::Result<Vec<Bound>> {
    let mut all = dump(&dump_request(), parse)?;
    if Holder::current().is_some_and(|h| h.network()) {
        all.extend(dump_with(own_socket()?, &dump_request(), parse)?);
    }
    Ok(all)
}

/// A sock_diag socket of the job's network namespace: the holder's where the job has one of its
/// own (the sockets a dump lists are those of the namespace the socket was made in), else one of
/// this process's.
fn diag_socket() -> std::io::Result<OwnedFd> {
    if let Some(holder) = Holder::current().filter(|h| h.network()) {
        return holder.socket(libc::AF_NETLINK, libc::SOCK_DGRAM, libc::NETLINK_SOCK_DIAG);
    }
    own_socket()
}

/// A sock_diag socket of this process's network namespace.
fn own_socket() -> std::io::Result<OwnedFd> {
    // SAFETY: socket(2) returns a new descriptor or -1.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The replies to the sock_diag `request`, each message read by `parse` (`None`: skipped).
pub(super) fn dump<T>(
    request: &[u8],
    parse: impl Fn(&[u8]) -> Option<T>,
) -> std::io::Result<Vec<T>> {
    dump_with(diag_socket()?, request, parse)
}

/// The replies to `request` on the sock_diag socket `fd`.
fn dump_with<T>(
    fd: OwnedFd,
    request: &[u8],
    parse: impl Fn(&[u8]) -> Option<T>,
) -> std::io::Result<Vec<T>> {
    // SAFETY: sockaddr_nl is plain data; zeroed (port 0, no groups) addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: `request` and `kernel` are valid for the lengths given.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            request.as_ptr().cast(),
            request.len(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if sent < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: recv writes at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(err);
        }
        let mut rest = &buf[..n as usize];
        while rest.len() >= NLMSG_HDR {
            let len = u32::from_ne_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            let kind = u16::from_ne_bytes([rest[4], rest[5]]);
            if len < NLMSG_HDR || len > rest.len() {
                return Err(std::io::Error::other("malformed sock_diag reply"));
            }
            match kind {
                NLMSG_DONE => return Ok(out),
                NLMSG_ERROR => return Err(refused(&rest[NLMSG_HDR..len])),
                SOCK_DIAG_BY_FAMILY => {
                    if let Some(b) = parse(&rest[NLMSG_HDR..len]) {
                        out.push(b);
                    }
                }
                _ => {}
            }
            rest = &rest[align(len).min(rest.len())..];
        }
    }
}

/// The error an `NLMSG_ERROR` reply carries (a negative errno first): the kernel's own, so that
/// a family or protocol it has no diagnostics for says so.
fn refused(payload: &[u8]) -> std::io::Error {
    match payload
        .get(..4)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
    {
        Some(code) if code < 0 => std::io::Error::from_raw_os_error(-code),
        _ => std::io::Error::other("sock_diag refused the request"),
    }
}

/// A dump request's netlink header, for a request of `len` bytes after it.
pub(super) fn header(len: usize) -> Vec<u8> {
    // struct nlmsghdr: length, type, flags, sequence, port (the kernel fills it in).
    let mut request = Vec::with_capacity(NLMSG_HDR + len);
    request.extend_from_slice(&((NLMSG_HDR + len) as u32).to_ne_bytes());
    request.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    request.extend_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
    request.extend_from_slice(&1u32.to_ne_bytes());
    request.extend_from_slice(&0u32.to_ne_bytes());
    request
}

/// The request for a dump of every unix socket, with its name and its file.
fn dump_request() -> Vec<u8> {
    let mut request = header(24);
    // struct unix_diag_req: family, protocol, pad, states (all), inode (all), what to show, cookie.
    request.extend_from_slice(&[libc::AF_UNIX as u8, 0, 0, 0]);
    request.extend_from_slice(&u32::MAX.to_ne_bytes());
    request.extend_from_slice(&0u32.to_ne_bytes());
    request.extend_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_VFS).to_ne_bytes());
    request.extend_from_slice(&[0xff; 8]);
    request
}
