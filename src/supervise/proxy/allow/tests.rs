//! The allowlist's word on names, wildcards, ports and local addresses.

use super::*;

fn list(entries: &[&str], allow_local: bool) -> AllowList {
    AllowList {
        destinations: entries.iter().map(|e| e.parse().unwrap()).collect(),
        allow_local,
        proxy: Some("127.0.0.1:3128".parse().unwrap()),
    }
}

#[test]
fn names_wildcards_and_ports() {
    let l = list(
        &[
            "api.anthropic.com",
            "*.github.com",
            "registry.npmjs.org:8443",
        ],
        false,
    );
    assert_eq!(l.check("api.anthropic.com", 443), Ok(Grant::Listed));
    assert_eq!(l.check("api.anthropic.com", 80), Ok(Grant::Listed));
    assert_eq!(l.check("api.anthropic.com", 22), Err(Refusal::NotListed));
    assert_eq!(l.check("codeload.github.com", 443), Ok(Grant::Listed));
    assert_eq!(l.check("github.com", 443), Err(Refusal::NotListed));
    assert_eq!(l.check("evilgithub.com", 443), Err(Refusal::NotListed));
    assert_eq!(l.check("registry.npmjs.org", 8443), Ok(Grant::Listed));
    assert_eq!(l.check("registry.npmjs.org", 443), Err(Refusal::NotListed));
    // Loopback on any port is the job's own servers' (the connect checks who listens there).
    assert_eq!(l.check("localhost", 20000), Ok(Grant::Own));
    assert_eq!(l.check("127.0.0.1", 20001), Ok(Grant::Own));
}

#[test]
fn an_entry_that_names_a_local_destination_allows_exactly_it() {
    let l = list(
        &[
            "127.0.0.1:11434",
            "localhost:4000",
            "10.1.2.3:8080",
            "[::1]:9000",
        ],
        false,
    );
    assert_eq!(l.check("127.0.0.1", 11434), Ok(Grant::Named));
    assert_eq!(l.check("localhost", 4000), Ok(Grant::Named));
    assert_eq!(l.check("10.1.2.3", 8080), Ok(Grant::Named));
    assert_eq!(l.check("::1", 9000), Ok(Grant::Named));
    assert_eq!(l.check("10.1.2.3", 8081), Err(Refusal::NotListed));
    assert_eq!(l.check("10.1.2.4", 8080), Err(Refusal::NotListed));
    let addrs = l.resolve("10.1.2.3", 8080, Grant::Named).unwrap();
    assert_eq!(addrs, vec!["10.1.2.3:8080".parse().unwrap()]);
    let addrs = l.resolve("localhost", 4000, Grant::Named).unwrap();
    assert!(addrs
        .iter()
        .all(|a| a.ip().is_loopback() && a.port() == 4000));
    // A name that resolves to a local address is still refused without allow_local.
    for bad in ["https://x", "10.1.2.3:0", "[::1", "[::1]x"] {
        assert!(bad.parse::<Destination>().is_err(), "{bad}");
    }
}

#[test]
fn local_addresses_are_refused_unless_allowed() {
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.100.100.200",
        "0.0.0.0",
        "::1",
        "::",
        "fe80::1",
        "fd00:ec2::254",
        "::ffff:127.0.0.1",
        "64:ff9b::a9fe:a9fe",
        // Documentation networks, which a machine may be given (the review's was 192.0.2.2).
        "192.0.2.2",
        "198.51.100.7",
        "203.0.113.9",
        "2001:db8::1",
    ] {
        assert!(local(ip.parse().unwrap()), "{ip}");
    }
    for ip in [
        "93.184.216.34",
        "2606:4700::1111",
        "1.1.1.1",
        "192.0.3.1",
        "2001:db9::1",
    ] {
        assert!(!local(ip.parse().unwrap()), "{ip}");
    }
    let strict = list(&["localhost:8080"], false);
    assert!(matches!(
        strict.resolve("127.0.0.1", 8080, Grant::Listed),
        Err(Refusal::Local(_))
    ));
    let open = list(&["localhost:8080"], true);
    assert!(open.resolve("127.0.0.1", 8080, Grant::Listed).is_ok());
    assert_eq!(
        open.resolve("127.0.0.1", 3128, Grant::Listed),
        Err(Refusal::Loop)
    );
}

/// A name of the job's own beneath `.localhost` is never asked of a resolver (the query would
/// carry it off the machine): it is loopback, as RFC 6761 keeps it.
#[test]
fn the_jobs_own_names_are_loopback_without_a_resolver() {
    let l = list(&[], false);
    let name = "data-6c65616b6564-through-dns.localhost";
    assert_eq!(l.check(name, 20000), Ok(Grant::Own));
    let addrs = l.resolve(name, 20000, Grant::Own).unwrap();
    assert!(!addrs.is_empty());
    assert!(addrs
        .iter()
        .all(|a| a.ip().is_loopback() && a.port() == 20000));
}
