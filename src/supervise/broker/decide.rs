//! The verdict on one call: the caller's arguments read once through its pidfd, its socket taken,
//! and the decision made on that socket and that address or option (unix/, inet/, pty.rs). It never
//! decides on anything the job can change after it was read.

use std::os::fd::OwnedFd;

use super::bind;
use super::caller::{Caller, Callers};
use super::decided::{Decided, Decision, Kind};
use super::{connection, inet, process, pty, unix, Verdict};
use crate::sandbox::notify::{Answer, Call, Listener};
use crate::sandbox::plan::Sockets;
use crate::sandbox::seccomp::{BY_PID, IPC, SIGNALS};

/// The largest address a connect takes (`sizeof(struct sockaddr_storage)`).
const ADDRESS_MAX: u64 = 128;

/// The verdict on `call`, with the caller's socket and address.
pub(super) fn decide(
    listener: &Listener,
    call: &Call,
    sockets: &Sockets,
    unix: &mut unix::Unix,
    callers: &mut Callers,
) -> Decision {
    let caller = match callers.open(listener, call) {
        Ok(caller) => caller,
        Err(libc::ENOENT) => return Decision::Gone,
        Err(e) => return Decided::failed(e),
    };
    let take = |fd: u64| match caller.take(fd) {
        Err(libc::ESRCH) if caller.kept() => Err(Decision::Stale),
        Err(e) => Err(Decided::failed(e)),
        Ok(socket) => Ok(socket),
    };
    match call.nr {
        libc::SYS_connect | libc::SYS_bind => match address_and_socket(call, &caller, take) {
            Err(decision) => decision,
            Ok((addr, socket)) if call.nr == libc::SYS_bind => bind(sockets, unix, addr, socket),
            Ok((addr, socket)) => connect(sockets, unix, &caller, addr, socket),
        },
        libc::SYS_listen => {
            let socket = match take(call.args[0]) {
                Ok(socket) => socket,
                Err(decision) => return decision,
            };
            Decision::Decided(Decided {
                verdict: inet::listen(sockets, &socket, call.args[1], unix.members()),
                kind: Kind::Listen,
                socket: Some(socket),
                addr: Vec::new(),
            })
        }
        libc::SYS_ioctl => {
            let master = match take(call.args[0]) {
                Ok(master) => master,
                Err(decision) => return decision,
            };
            Decision::Decided(Decided {
                verdict: match pty::peer(&master, call.args[2]) {
                    Ok((slave, cloexec)) => Verdict::Send(slave, cloexec),
                    Err(errno) => Verdict::Done(Answer::Errno(errno)),
                },
                kind: Kind::Tcp,
                socket: None,
                addr: Vec::new(),
            })
        }
        libc::SYS_setsockopt => reuse_address(call, &caller, take),
        nr if SIGNALS.contains(&nr) => process::signal(call, unix.members(), take, |addr, len| {
            caller.read(addr, len)
        }),
        nr if IPC.contains(&nr) || BY_PID.iter().any(|(by_pid, _)| *by_pid == nr) => {
            process::decide(call, unix.members())
        }
        _ => Decided::failed(libc::ENOSYS),
    }
}

/// The verdict on `setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, value, len)`, the only option the
/// filter hands over: the value read once, then the socket taken.
fn reuse_address(
    call: &Call,
    caller: &Caller,
    take: impl Fn(u64) -> Result<OwnedFd, Decision>,
) -> Decision {
    // The kernel takes an int, and refuses a shorter one (its optlen is 32 bits).
    let len = std::mem::size_of::<libc::c_int>();
    if ((call.args[4] & 0xffff_ffff) as usize) < len {
        return Decided::failed(libc::EINVAL);
    }
    let value = match caller.read(call.args[3], len) {
        Ok(bytes) => libc::c_int::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        Err(e) => return Decided::failed(e),
    };
    let socket = match take(call.args[0]) {
        Ok(socket) => socket,
        Err(decision) => return decision,
    };
    Decision::Decided(Decided {
        verdict: inet::reuse_address(&socket, value),
        // Never counted: the verdict is always a result (`Done`), never `Refused`.
        kind: Kind::Listen,
        socket: Some(socket),
        addr: Vec::new(),
    })
}

/// The address a `connect` or `bind` names (its second and third arguments), read once, then the
/// socket (its first) taken.
fn address_and_socket(
    call: &Call,
    caller: &Caller,
    take: impl Fn(u64) -> Result<OwnedFd, Decision>,
) -> Result<(Vec<u8>, OwnedFd), Decision> {
    // The kernel takes at most a sockaddr_storage (its socklen_t is 32 bits).
    let len = call.args[2] & 0xffff_ffff;
    if len > ADDRESS_MAX {
        return Err(Decided::failed(libc::EINVAL));
    }
    let addr = caller
        .read(call.args[1], len as usize)
        .map_err(Decided::failed)?;
    // Had the caller died since it was opened, its pid (and so what was read) could be
    // another process's: the socket is taken through the caller's pidfd, which then fails,
    // and nothing is connected or bound.
    Ok((addr, take(call.args[0])?))
}

/// The verdict on a `bind` of `socket` (taken for its family) to `addr` (read once): checked
/// (bind.rs for a unix socket, inet/bind.rs for an inet one).
fn bind(sockets: &Sockets, unix: &unix::Unix, addr: Vec<u8>, socket: OwnedFd) -> Decision {
    let verdict = match connection::option(&socket, libc::SO_DOMAIN) {
        Ok(libc::AF_INET) | Ok(libc::AF_INET6) => inet::bind(&socket, &addr, unix.members()),
        Ok(family) => Verdict::Done(bind::bind(family, &addr, sockets.abstract_scoped)),
        Err(e) => Verdict::Done(Answer::Errno(e)),
    };
    Decision::Decided(Decided {
        verdict,
        kind: Kind::Tcp,
        socket: Some(socket),
        addr: Vec::new(),
    })
}

/// The verdict on a `connect` of `socket` to `addr` (read once, before the socket was taken),
/// decided by the socket's family.
fn connect(
    sockets: &Sockets,
    unix: &mut unix::Unix,
    caller: &Caller,
    addr: Vec<u8>,
    socket: OwnedFd,
) -> Decision {
    let (verdict, kind) = match connection::option(&socket, libc::SO_DOMAIN) {
        Err(e) => (Verdict::Done(Answer::Errno(e)), Kind::Tcp),
        Ok(libc::AF_UNIX) => (unix.connect(caller, &addr), Kind::Unix),
        Ok(libc::AF_INET) | Ok(libc::AF_INET6) => (
            inet::connect(sockets, &socket, &addr, unix.members()),
            Kind::Tcp,
        ),
        Ok(libc::AF_NETLINK) => (inet::connect_netlink(&addr), Kind::Tcp),
        Ok(_) => (Verdict::Connect, Kind::Tcp),
    };
    Decision::Decided(Decided {
        verdict,
        kind,
        socket: Some(socket),
        addr,
    })
}
