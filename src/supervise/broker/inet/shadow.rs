//! A localhost service of someone else's on the other family: a job that listens on `[::1]:P`
//! beside a user's server on `127.0.0.1:P` (or the other way round) is reached by every client
//! that resolves `localhost` to its family first, and the kernel sees no conflict (two families,
//! two addresses). The listeners there are the kernel's socket diagnostics' (listeners/inet.rs).

use std::net::IpAddr;

use crate::supervise::broker::listeners::{
    held_by_job, listening as listeners, Listening, Members,
};

/// Whether a job listening on `local`:`port` would take the clients of a listener that is not the
/// job's: one on `port` of the other family's loopback or wildcard address. Only an address
/// `localhost` reaches (a loopback or a wildcard one) can; `None` when the kernel cannot say.
pub(super) fn shadows(local: IpAddr, port: u16, members: &Members) -> Option<bool> {
    if !(local.is_loopback() || local.is_unspecified()) {
        return Some(false);
    }
    let reaches = |l: &Listening| l.port == port && (l.ip.is_loopback() || l.ip.is_unspecified());
    let others: Vec<Listening> = match local {
        // IPv6 sockets, but those bound to an IPv4-mapped address, which are IPv4 listeners.
        IpAddr::V4(_) => listeners(libc::AF_INET6)?
            .into_iter()
            .filter(|l| l.ip.is_ipv6())
            .collect(),
        IpAddr::V6(_) => {
            let mut v4 = listeners(libc::AF_INET)?;
            v4.extend(
                listeners(libc::AF_INET6)?
                    .into_iter()
                    .filter(|l| l.ip.is_ipv4()),
            );
            v4
        }
    };
    Some(
        others
            .iter()
            .filter(|l| reaches(l))
            .any(|l| !held_by_job(l.socket, members)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// The kernel's own report, read back: a listener of each family, found at its address and
    /// port.
    #[test]
    fn listeners_are_found_at_their_address_and_port() {
        let v4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = v4.local_addr().unwrap().port();
        let found = listeners(libc::AF_INET).unwrap();
        let at = |ip: IpAddr, port| found.iter().any(|l| l.ip == ip && l.port == port);
        assert!(at(IpAddr::V4(Ipv4Addr::LOCALHOST), port), "{found:?}");
        if let Ok(v6) = std::net::TcpListener::bind("[::1]:0") {
            let port = v6.local_addr().unwrap().port();
            let found = listeners(libc::AF_INET6).unwrap();
            let ip = IpAddr::V6(Ipv6Addr::LOCALHOST);
            assert!(
                found.iter().any(|l| l.ip == ip && l.port == port),
                "{found:?}"
            );
        }
    }
}
