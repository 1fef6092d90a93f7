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
        private_network: false,
        private_ipc: false,
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

/// The filter as libseccomp describes it (its "pseudo filter code").
fn described(sockets: &Sockets) -> String {
    let file = tempfile::tempfile().unwrap();
    context(sockets).unwrap().export_pfc(&file).unwrap();
    let mut text = String::new();
    let mut file = file;
    std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(0)).unwrap();
    file.read_to_string(&mut text).unwrap();
    text
}

/// A system call newer than the filter is refused as if the kernel lacked it; the kernel these
/// tests run on may lack it too, so the filter itself is read.
#[test]
fn system_calls_newer_than_the_filter_are_as_if_the_kernel_lacked_them() {
    let text = described(&sockets());
    for call in [470, 490, 511] {
        let rule = text
            .split("# filter for syscall")
            .find(|rule| rule.contains(&format!("if ($syscall == {call})")))
            .unwrap_or_else(|| panic!("no rule for {call}:\n{text}"));
        assert!(rule.contains("action ERRNO(38)"), "{call}: {rule}");
    }
    assert!(!text.contains("if ($syscall == 512)"), "{text}");
}
