//! A localhost service of someone else's on the other family: a job that listens on `[::1]:P`
//! beside a user's server on `127.0.0.1:P` (or the other way round) is reached by every client
//! that resolves `localhost` to its family first, and the kernel sees no conflict (two families,
//! two addresses). So with UDP: a job's socket bound to `[::1]:P` beside a user's DNS cache on
//! `127.0.0.1:P` receives the queries of every client that tries `::1` first. The servers there
//! are the kernel's socket diagnostics' (listeners/inet.rs).

use std::net::IpAddr;

use crate::supervise::broker::listeners::{held_by_job, serving, Listening, Members, Server};

/// Whether a job serving (`server`: listening on TCP, bound on UDP) on `local`:`port` would take
/// the clients of a server of that kind that is not the job's: one on `port` of the other
/// family's loopback or wildcard address. Only an address `localhost` reaches (a loopback or a
/// wildcard one) can; `None` when the kernel cannot say.
pub(super) fn shadows(server: Server, local: IpAddr, port: u16, members: &Members) -> Option<bool> {
    let listeners = |family| serving(server, family);
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
        let listeners = |family| serving(Server::Tcp, family);
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

    /// A UDP socket bound on one family's loopback is found; the other family's loopback on its
    /// port is shadowing, another port is not, and neither is its own family's.
    #[test]
    fn a_udp_socket_on_the_other_familys_loopback_is_shadowed() {
        let v4 = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = v4.local_addr().unwrap().port();
        let found = serving(Server::Udp, libc::AF_INET).unwrap();
        let v4_ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
        assert!(
            found.iter().any(|l| l.ip == v4_ip && l.port == port),
            "{found:?}"
        );
        // A job of this process's children, none of which holds the test's socket.
        let members = Members {
            root: nix::unistd::Pid::this(),
            cgroup: None,
        };
        let v6 = IpAddr::V6(Ipv6Addr::LOCALHOST);
        assert_eq!(shadows(Server::Udp, v6, port, &members), Some(true));
        assert_eq!(
            shadows(
                Server::Udp,
                IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                port,
                &members
            ),
            Some(true)
        );
        assert_eq!(shadows(Server::Udp, v4_ip, port, &members), Some(false));
        assert_eq!(
            shadows(Server::Tcp, v6, port, &members),
            Some(false),
            "TCP is not UDP"
        );
        let other = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let free = other.local_addr().unwrap().port();
        drop(other);
        assert_eq!(shadows(Server::Udp, v6, free, &members), Some(false));
    }
}
