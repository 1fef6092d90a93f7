//! Which addresses are local: this machine, its networks, and the cloud's metadata services. An
//! IPv6 address that carries an IPv4 address (mapped, compatible, translated, NAT64, 6to4, Teredo,
//! ISATAP) is local when the IPv4 address it carries is: a translator or tunnel on the way
//! delivers it there. Nothing here resolves a name.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `localhost` or a loopback address literal.
pub(super) fn loopback_name(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<IpAddr>()
            .is_ok_and(|ip| unmapped(ip).is_loopback())
}

pub(super) fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// An address of this machine, its networks, or the cloud's metadata service: the addresses a
/// name under an attacker's control could point the proxy at to reach what the job may not.
pub fn local(ip: IpAddr) -> bool {
    match unmapped(ip) {
        IpAddr::V4(v4) => local_v4(v4),
        IpAddr::V6(v6) => local_v6(v6),
    }
}

fn local_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254.0.0/16: the metadata service of AWS, GCP, Azure
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (Alibaba's metadata)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking networks
        || documentation(ip) // a machine may be given one all the same (the review's was)
        || a >= 240
}

fn local_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    embedded_v4(ip).into_iter().any(local_v4)
        || ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local (fd00:ec2::254: AWS's metadata)
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local, deprecated
        || ip.segments()[..2] == [0x2001, 0xdb8] // documentation
}

/// The IPv4 addresses `ip` carries in one of the standard forms, where a host, translator or
/// tunnel on the way may deliver it. Each form is judged by the address it carries, so that
/// `64:ff9b::7f00:1` is 127.0.0.1 as much as `::ffff:127.0.0.1` is. A network-specific NAT64
/// prefix an operator chose (RFC 6052) cannot be known from the address alone.
fn embedded_v4(ip: Ipv6Addr) -> Vec<Ipv4Addr> {
    let o = ip.octets();
    let s = ip.segments();
    let at = |i: usize| Ipv4Addr::new(o[i], o[i + 1], o[i + 2], o[i + 3]);
    let mut out = Vec::new();
    // IPv4-mapped (::ffff:0:0/96) and IPv4-compatible (::/96, deprecated, RFC 4291 2.5.5.1).
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        out.push(at(12));
    }
    // IPv4-translated (::ffff:0:0:0/96, RFC 2765).
    if s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0 {
        out.push(at(12));
    }
    // NAT64, the well-known prefix (64:ff9b::/96, RFC 6052).
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        out.push(at(12));
    }
    // NAT64, the local-use prefix (64:ff9b:1::/48, RFC 8215), under each prefix length RFC 6052
    // allows within it whose layout the address fits: the IPv4 address after the prefix, skipping
    // bits 64-71, which are zero, and zeros after it. An address that fits none is read as
    // 0.0.0.0 (local): no translator is known to deliver it anywhere in particular.
    if s[..3] == [0x64, 0xff9b, 1] {
        let zero = |from: usize| o[8] == 0 && o[from..].iter().all(|&b| b == 0);
        let layouts = [
            (zero(11), Ipv4Addr::new(o[6], o[7], o[9], o[10])), // /48
            (zero(12), Ipv4Addr::new(o[7], o[9], o[10], o[11])), // /56
            (zero(13), at(9)),                                  // /64
            (o[8] == 0, at(12)),                                // /96
        ];
        // A shorter layout's address read as /96 is 0.0.0.0, which no translator delivers to.
        let read: Vec<Ipv4Addr> = layouts
            .into_iter()
            .filter(|(fits, v4)| *fits && !v4.is_unspecified())
            .map(|(_, v4)| v4)
            .collect();
        match read.is_empty() {
            true => out.push(Ipv4Addr::UNSPECIFIED),
            false => out.extend(read),
        }
    }
    // 6to4 (2002::/16, RFC 3056): the relay's IPv4 address follows the prefix.
    if s[0] == 0x2002 {
        out.push(at(2));
    }
    // Teredo (2001::/32, RFC 4380): the server's address, and the client's, inverted.
    if s[..2] == [0x2001, 0] {
        out.push(at(4));
        let c = at(12).octets().map(|b| !b);
        out.push(Ipv4Addr::from(c));
    }
    // ISATAP (RFC 5214): an interface identifier `0:5efe:a.b.c.d` (the u and g bits aside),
    // under any prefix.
    if o[8] & !0x03 == 0 && o[9..12] == [0, 0x5e, 0xfe] {
        out.push(at(12));
    }
    out
}

/// The documentation networks (RFC 5737): TEST-NET-1, -2 and -3.
fn documentation(ip: Ipv4Addr) -> bool {
    matches!(
        ip.octets(),
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_local(ip: &str) -> bool {
        local(ip.parse().unwrap())
    }

    #[test]
    fn an_ipv4_mapped_address_is_the_ipv4_address() {
        assert!(is_local("::ffff:127.0.0.1"));
        assert!(is_local("::ffff:169.254.169.254"));
        assert!(!is_local("::ffff:93.184.216.34"));
    }

    #[test]
    fn an_ipv4_compatible_address_is_the_ipv4_address() {
        assert!(is_local("::127.0.0.1"));
        assert!(is_local("::10.0.0.1"));
        assert!(!is_local("::93.184.216.34"));
    }

    #[test]
    fn an_ipv4_translated_address_is_the_ipv4_address() {
        assert!(is_local("::ffff:0:127.0.0.1"));
        assert!(is_local("::ffff:0:192.168.1.1"));
        assert!(!is_local("::ffff:0:93.184.216.34"));
    }

    #[test]
    fn a_nat64_address_of_the_well_known_prefix_is_the_ipv4_address() {
        assert!(is_local("64:ff9b::127.0.0.1"));
        assert!(is_local("64:ff9b::a9fe:a9fe"));
        assert!(!is_local("64:ff9b::93.184.216.34"));
    }

    /// RFC 8215's prefix under each length RFC 6052 allows within it (/48, /56, /64, /96).
    #[test]
    fn a_nat64_address_of_the_local_use_prefix_is_the_ipv4_address_at_every_length() {
        // 127.0.0.1 = 7f 00 00 01, 93.184.216.34 = 5d b8 d8 22.
        // 127.0.0.1 is 7f 00 00 01; 93.184.216.34 is 5d b8 d8 22.
        for ip in [
            "64:ff9b:1:7f00:0:100::",      // /48: octets 6, 7, then 9, 10
            "64:ff9b:1:7f:0:1::",          // /56: octet 7, then 9, 10, 11
            "64:ff9b:1::7f:0:100:0",       // /64: octets 9 to 12
            "64:ff9b:1::127.0.0.1",        // /96
            "64:ff9b:1::a9fe:a9fe",        // /96, the metadata service
            "64:ff9b:1:0:ff00::5db8:d822", // bits 64-71 set: no layout fits
        ] {
            assert!(is_local(ip), "{ip}");
        }
        for ip in [
            "64:ff9b:1:5db8:d8:2200::",  // /48
            "64:ff9b:1:5d:b8:d822::",    // /56
            "64:ff9b:1::5d:b8d8:2200:0", // /64
            "64:ff9b:1::5db8:d822",      // /96
        ] {
            assert!(!is_local(ip), "{ip}");
        }
    }

    #[test]
    fn a_6to4_address_is_its_relays_ipv4_address() {
        assert!(is_local("2002:7f00:1::1"));
        assert!(is_local("2002:a9fe:a9fe::"));
        assert!(is_local("2002:c0a8:101::1"));
        assert!(!is_local("2002:5db8:d822::1"));
    }

    #[test]
    fn a_teredo_address_is_its_servers_and_its_clients_ipv4_address() {
        // The server 127.0.0.1; the client 127.0.0.1, inverted: 80ff:fffe.
        assert!(is_local("2001:0:7f00:1::"));
        assert!(is_local("2001:0:5db8:d822:0:0:80ff:fffe"));
        // Both public: 93.184.216.34 and 1.1.1.1 (inverted: fefe:fefe).
        assert!(!is_local("2001:0:5db8:d822:0:0:fefe:fefe"));
    }

    #[test]
    fn an_isatap_address_is_its_ipv4_address() {
        assert!(is_local("2606:4700::5efe:7f00:1"));
        assert!(is_local("2606:4700::200:5efe:a9fe:a9fe"));
        assert!(!is_local("2606:4700::5efe:5db8:d822"));
    }
}
