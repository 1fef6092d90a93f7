//! bind(2) of a UDP socket, which serves as soon as it is bound (no `listen` to judge it on): a
//! job never binds where `localhost` reaches (a loopback or wildcard address) on a port a UDP
//! server of someone else's holds on the other family (shadow.rs), refused with `EADDRINUSE` as
//! the listen of a TCP socket is. Every other bind is the kernel's to make (`CONTINUE`), under the
//! caller's whole Landlock domain. The kernel reads the address again, so a second thread of the
//! job can swap another in after the check (SECURITY.md, "Eleventh look").

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
    match (udp, ip(addr), port(addr)) {
        (true, Some(ip), Some(port @ 1..)) => match shadows(Server::Udp, ip, port, members) {
            Some(false) => Verdict::Done(Answer::Continue),
            Some(true) => Verdict::RefusedAs(libc::EADDRINUSE),
            // The kernel's tables cannot be read: nothing can tell.
            None => Verdict::Refused,
        },
        _ => Verdict::Done(Answer::Continue),
    }
}
