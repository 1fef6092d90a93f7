//! Which addresses are local: this machine, its networks, and the cloud's metadata services, an
//! IPv4 address mapped into IPv6 (or NAT64) judged as the IPv4 address it is. Nothing here
//! resolves a name.

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
    // NAT64 (64:ff9b::/96) embeds an IPv4 address: judged as that address.
    if ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let o = ip.octets();
        return local_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local (fd00:ec2::254: AWS's metadata)
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local, deprecated
        || ip.segments()[..2] == [0x2001, 0xdb8] // documentation
}

/// The documentation networks (RFC 5737): TEST-NET-1, -2 and -3.
fn documentation(ip: Ipv4Addr) -> bool {
    matches!(
        ip.octets(),
        [192, 0, 2, _] | [198, 51, 100, _] | [203, 0, 113, _]
    )
}
