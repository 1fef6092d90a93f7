//! Which inet connects a domain allowlist routes: the proxy's exact address and the job's own ports.

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

#[test]
fn under_an_allowlist_only_the_proxy_and_the_jobs_own_ports_are_reachable() {
    let route = Route {
        proxy: Some(3128),
        own: vec![20000, 20001],
    };
    let check = |addr: Vec<u8>| routed(&route, ip(&addr).unwrap(), port(&addr).unwrap());
    assert!(check(v4([127, 0, 0, 1], 3128)));
    assert!(!check(v4([127, 0, 0, 2], 3128)), "another loopback address");
    assert!(
        !check(v6(Ipv6Addr::LOCALHOST, 3128)),
        "the proxy is on 127.0.0.1 only"
    );
    assert!(check(v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped(), 3128)));
    assert!(check(v4([127, 0, 0, 1], 20001)));
    assert!(check(v6(Ipv6Addr::LOCALHOST, 20000)));
    assert!(!check(v4([127, 0, 0, 1], 20002)), "someone else's port");
    assert!(!check(v4([10, 0, 0, 1], 20000)), "not loopback");
    assert!(!check(v4([93, 184, 216, 34], 443)));
    let unstarted = Route {
        proxy: None,
        own: Vec::new(),
    };
    let addr = v4([127, 0, 0, 1], 3128);
    assert!(!routed(&unstarted, ip(&addr).unwrap(), 3128));
}
