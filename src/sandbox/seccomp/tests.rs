use super::*;

fn sockets() -> Sockets {
    Sockets {
        unix_allowed: Vec::new(),
        unix_datagram: false,
        abstract_scoped: true,
        udp: true,
        tcp_connect: None,
        tcp_bind: None,
        route: None,
        judge: Judge::Supervisor,
    }
}

#[test]
fn every_variant_of_the_policy_builds_a_filter() {
    for udp in [true, false] {
        for unix_datagram in [true, false] {
            for restricted in [None, Some(vec![443])] {
                for judge in [Judge::Supervisor, Judge::OuterJob] {
                    let sockets = Sockets {
                        udp,
                        unix_datagram,
                        tcp_connect: restricted.clone(),
                        tcp_bind: restricted.clone(),
                        judge,
                        ..sockets()
                    };
                    let bpf = program(&sockets).unwrap();
                    assert_eq!(bpf.len() % std::mem::size_of::<libc::sock_filter>(), 0);
                    assert!(!bpf.is_empty());
                }
            }
        }
    }
}
