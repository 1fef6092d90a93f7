//! Which inet connects a domain allowlist routes: the proxy's exact address and the job's own
//! ports, where nobody else listens.

use super::*;

fn v4(a: [u8; 4], port: u16) -> Vec<u8> {
    let mut addr = (libc::AF_INET as u16).to_ne_bytes().to_vec();
    addr.extend(port.to_be_bytes());
    addr.extend(a);
    addr.extend([0u8; 8]);
    addr
}

fn v6(a: Ipv6Addr, port: u16) -> Vec<u8> {
    let mut addr = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
    addr.extend(port.to_be_bytes());
    addr.extend([0u8; 4]);
    addr.extend(a.octets());
    addr.extend([0u8; 4]);
    addr
}

/// A job of no process: every listener is someone else's.
fn nobody() -> Members {
    Members {
        root: nix::unistd::Pid::from_raw(i32::MAX),
        cgroup: None,
    }
}

/// Two ports nobody listens on (bound and released; another process could take them meanwhile,
/// which this machine's tests do not).
fn free_ports() -> [u16; 2] {
    let a = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    [
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    ]
}

#[test]
fn under_an_allowlist_only_the_proxy_the_named_and_the_jobs_own_servers_are_reachable() {
    let [p0, p1] = free_ports();
    let route = Route {
        proxy: Some(3128),
        own: vec![p0, p1],
        named: Vec::new(),
    };
    let members = nobody();
    // Allowed, to the proxy as asked, to a port of the block checked again once made.
    let check = |addr: Vec<u8>| {
        let verdict = routed(&route, ip(&addr).unwrap(), port(&addr).unwrap(), &members);
        match verdict {
            Verdict::Connect => port(&addr) == Some(3128),
            Verdict::ConnectOwn(checked) => port(&addr) == Some(checked) && checked != 3128,
            _ => false,
        }
    };
    assert!(check(v4([127, 0, 0, 1], 3128)));
    assert!(!check(v4([127, 0, 0, 2], 3128)), "another loopback address");
    assert!(
        !check(v6(Ipv6Addr::LOCALHOST, 3128)),
        "the proxy is on 127.0.0.1 only"
    );
    assert!(check(v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), 3128)));
    assert!(check(v4([127, 0, 0, 1], p1)));
    assert!(check(v6(Ipv6Addr::LOCALHOST, p0)));
    // Any loopback port only the job listens on (nobody, here) is its own, checked again.
    assert!(check(v4([127, 0, 0, 1], 1)), "a port outside the block");
    assert!(!check(v4([10, 0, 0, 1], p0)), "not loopback");
    // Someone else's server on a port of the block, on either loopback.
    let theirs = std::net::TcpListener::bind(("127.0.0.1", p1)).unwrap();
    assert!(!check(v4([127, 0, 0, 1], p1)), "another's listener");
    assert!(
        !check(v6(Ipv6Addr::LOCALHOST, p1)),
        "another's listener, other family"
    );
    drop(theirs);
    assert!(!check(v4([93, 184, 216, 34], 443)));
    let unstarted = Route {
        proxy: None,
        own: Vec::new(),
        named: Vec::new(),
    };
    let addr = v4([127, 0, 0, 1], 3128);
    let verdict = routed(&unstarted, ip(&addr).unwrap(), 3128, &nobody());
    assert!(
        !matches!(verdict, Verdict::Connect),
        "the proxy before it started"
    );
    // A local destination the allowlist names is reached directly, exactly it.
    let gateway: std::net::SocketAddr = "10.1.2.3:8080".parse().unwrap();
    let named = Route {
        proxy: Some(3128),
        own: Vec::new(),
        named: vec![gateway],
    };
    let verdict = routed(&named, gateway.ip(), 8080, &nobody());
    assert!(matches!(verdict, Verdict::Connect));
    let verdict = routed(&named, gateway.ip(), 8081, &nobody());
    assert!(matches!(verdict, Verdict::Refused));
}
