//! listen(2), decided on the address the kernel holds for the socket.

use std::os::fd::{AsRawFd, OwnedFd};

use super::shadow::shadows;
use super::{ip, port};
use crate::sandbox::notify::Answer;
use crate::sandbox::plan::Sockets;
use crate::supervise::broker::bind::chosen_abstract;
use crate::supervise::broker::connection::option;
use crate::supervise::broker::listeners::{Members, Server};
use crate::supervise::broker::unix::SUN_PATH;
use crate::supervise::broker::Verdict;

/// listen(2). Where TCP bind is restricted, a TCP socket that was never bound would bind a port
/// on every address by itself, past Landlock's bind rule. Under a domain allowlist a job listens
/// on loopback only: a server on 0.0.0.0 would let anyone on the network in, past the proxy.
/// Under every policy, a job never listens where `localhost` reaches (a loopback or wildcard
/// address) on a port someone else's listener holds on the other family (shadow.rs): refused
/// with `EADDRINUSE`, as if that port were taken, which it is for whoever connects to
/// `localhost`. A unix socket bound to an abstract name the kernel did not choose never listens
/// where the policy scopes abstract sockets (bind.rs refuses such binds; this catches one a second
/// thread raced past that check). All on the address it bound, as the kernel holds it, and a
/// socket not bound yet is bound first, as the kernel's listen would (an unbound unix socket gets
/// the kernel's `EINVAL`, an unbound TCP one the wildcard address and a port of the kernel's
/// choosing): a bind of the job's that lands between the check and the listen could otherwise
/// change what was checked. A bound socket is never bound again. Everything else listens as
/// asked.
pub fn listen(sockets: &Sockets, socket: &OwnedFd, backlog: u64, members: &Members) -> Verdict {
    let family = option(socket, libc::SO_DOMAIN);
    let inet = matches!(family, Ok(libc::AF_INET) | Ok(libc::AF_INET6));
    let unix = family == Ok(libc::AF_UNIX);
    let mut local = bound(socket);
    // An unbound unix socket's name is its family alone.
    if unix && local.as_deref().is_some_and(|addr| addr.len() <= SUN_PATH) {
        return Verdict::Done(Answer::Errno(libc::EINVAL));
    }
    if unix && sockets.abstract_scoped && local.as_deref().is_some_and(chosen_abstract) {
        return Verdict::Refused;
    }
    let restricted = sockets.tcp_bind.is_some() || sockets.route.is_some();
    if inet && local.as_deref().and_then(port) == Some(0) {
        if restricted {
            return Verdict::Refused;
        }
        autobind(socket, family == Ok(libc::AF_INET6));
        local = bound(socket);
    }
    let port = local.as_deref().and_then(port);
    let ip = local.as_deref().and_then(ip);
    let loopback = ip.is_some_and(|ip| ip.is_loopback());
    if inet && sockets.route.is_some() && !loopback {
        return Verdict::Refused;
    }
    if let (true, Some(ip), Some(port @ 1..)) = (inet, ip, port) {
        match shadows(Server::Tcp, ip, port, members) {
            Some(false) => {}
            Some(true) => return Verdict::RefusedAs(libc::EADDRINUSE),
            // The kernel's tables cannot be read: nothing can tell.
            None => return Verdict::Refused,
        }
    }
    // The kernel reads backlog as an int.
    let backlog = backlog as u32 as libc::c_int;
    // SAFETY: listen on a descriptor the broker owns.
    let rc = unsafe { libc::listen(socket.as_raw_fd(), backlog) };
    if let (0, true, true, Some(port)) = (rc, inet, sockets.private_network, port) {
        crate::supervise::forward::listening(port);
    }
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

/// Binds a stream socket that has no address yet to the wildcard address of its family and a port
/// of the kernel's choosing, as `listen` would. Fails harmlessly (`EINVAL`) on one that a bind of
/// the job's bound meanwhile, which keeps that address; a datagram socket is left alone (its
/// listen fails).
fn autobind(socket: &OwnedFd, v6: bool) {
    if option(socket, libc::SO_TYPE) != Ok(libc::SOCK_STREAM) {
        return;
    }
    let (family, len) = match v6 {
        true => (libc::AF_INET6, std::mem::size_of::<libc::sockaddr_in6>()),
        false => (libc::AF_INET, std::mem::size_of::<libc::sockaddr_in>()),
    };
    // SAFETY: a zeroed sockaddr_storage with only its family set is that family's wildcard
    // address, port 0; bind reads `len` bytes of it (at most its size), and it outlives the call.
    unsafe {
        let mut addr: libc::sockaddr_storage = std::mem::zeroed();
        addr.ss_family = family as libc::sa_family_t;
        let addr = (&addr as *const libc::sockaddr_storage).cast();
        libc::bind(socket.as_raw_fd(), addr, len as libc::socklen_t);
    }
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
