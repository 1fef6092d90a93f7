use super::bpf::AUDIT_ARCH;
use super::interpreter::{check, run, Call};
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

/// Every way a policy can shape the filter (UDP, datagram unix sockets, TCP open, partly or
/// wholly restricted, whose judge).
fn variants() -> Vec<(String, Sockets)> {
    let mut variants = Vec::new();
    let tcp = [
        ("open", None, None),
        ("ports", Some(vec![443]), Some(vec![8080])),
        ("connect-ports", Some(vec![443]), None),
        ("none", Some(vec![]), Some(vec![])),
    ];
    for udp in [true, false] {
        for unix_datagram in [true, false] {
            for (name, connect, bind) in &tcp {
                for judge in [Judge::Supervisor, Judge::OuterJob] {
                    let sockets = Sockets {
                        udp,
                        unix_datagram,
                        tcp_connect: connect.clone(),
                        tcp_bind: bind.clone(),
                        judge,
                        ..sockets()
                    };
                    let name =
                        format!("udp={udp} unix_datagram={unix_datagram} tcp={name} {judge:?}");
                    variants.push((name, sockets));
                }
            }
        }
    }
    variants
}

#[test]
fn every_variant_of_the_policy_builds_a_filter() {
    for (name, sockets) in variants() {
        let bpf = program(&sockets).unwrap();
        assert_eq!(
            bpf.len() % std::mem::size_of::<libc::sock_filter>(),
            0,
            "{name}"
        );
        let program = context(&sockets).unwrap().compile().unwrap();
        check(&program).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(bpf.len(), program.len() * 8, "{name}");
    }
}

fn native(nr: libc::c_long, args: [u64; 6]) -> Call {
    Call {
        nr: nr as u32,
        arch: AUDIT_ARCH,
        args,
    }
}

/// A system call newer than the filter is refused as if the kernel lacked it; the kernel these
/// tests run on may lack it too, so the filter itself is run.
#[test]
fn system_calls_newer_than_the_filter_are_as_if_the_kernel_lacked_them() {
    let program = context(&sockets()).unwrap().compile().unwrap();
    let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    for call in [470, 490, 511] {
        assert_eq!(run(&program, &native(call, [0; 6])), enosys, "{call}");
    }
    let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    assert_eq!(run(&program, &native(469, [0; 6])), eperm);
    assert_eq!(run(&program, &native(512, [0; 6])), libc::SECCOMP_RET_ALLOW);
}

/// A few of the rules, run: what each refuses and what it lets through beside.
#[test]
// libc's ioctl numbers are u64 here and i32 elsewhere.
#[allow(clippy::unnecessary_cast)]
fn the_filter_refuses_what_its_rules_say_and_no_more() {
    let program = context(&sockets()).unwrap().compile().unwrap();
    let errno = |e: i32| libc::SECCOMP_RET_ERRNO | e as u32;
    let allow = libc::SECCOMP_RET_ALLOW;
    let notify = libc::SECCOMP_RET_USER_NOTIF;
    let socket = |family: i32, kind: i32, protocol: i32| {
        let args = [family as u64, kind as u64, protocol as u64, 0, 0, 0];
        run(&program, &native(libc::SYS_socket, args))
    };
    let cloexec = libc::SOCK_CLOEXEC;
    assert_eq!(socket(libc::AF_INET, libc::SOCK_STREAM | cloexec, 0), allow);
    assert_eq!(socket(libc::AF_INET6, libc::SOCK_DGRAM, 0), allow);
    assert_eq!(
        socket(libc::AF_INET, libc::SOCK_RAW | cloexec, 1),
        errno(libc::EPERM)
    );
    assert_eq!(
        socket(libc::AF_PACKET, libc::SOCK_RAW, 0),
        errno(libc::EAFNOSUPPORT)
    );
    assert_eq!(
        socket(libc::AF_VSOCK, libc::SOCK_STREAM, 0),
        errno(libc::EAFNOSUPPORT)
    );
    assert_eq!(
        socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0),
        errno(libc::EACCES)
    );
    assert_eq!(socket(libc::AF_UNIX, libc::SOCK_STREAM, 0), allow);
    let usersock = socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_USERSOCK);
    assert_eq!(usersock, errno(libc::EPROTONOSUPPORT));
    assert_eq!(socket(libc::AF_NETLINK, libc::SOCK_RAW, 0), allow);
    // A family with bits above the int set is above AF_NETLINK too.
    let high = [1 << 32 | libc::AF_INET as u64, 1, 0, 0, 0, 0];
    let high = run(&program, &native(libc::SYS_socket, high));
    assert_eq!(high, errno(libc::EAFNOSUPPORT));
    assert_eq!(run(&program, &native(libc::SYS_connect, [0; 6])), notify);
    let peer = [3, libc::TIOCGPTPEER as u64, 0, 0, 0, 0];
    assert_eq!(run(&program, &native(libc::SYS_ioctl, peer)), notify);
    let sti = [0, libc::TIOCSTI as u64, 0, 0, 0, 0];
    assert_eq!(
        run(&program, &native(libc::SYS_ioctl, sti)),
        errno(libc::EPERM)
    );
    let tcgets = [0, libc::TCGETS as u64, 0, 0, 0, 0];
    assert_eq!(run(&program, &native(libc::SYS_ioctl, tcgets)), allow);
    let dumpable = [libc::PR_SET_DUMPABLE as u64, 0, 0, 0, 0, 0];
    assert_eq!(run(&program, &native(libc::SYS_prctl, dumpable)), errno(0));
    let dumpable = [libc::PR_SET_DUMPABLE as u64, 1, 0, 0, 0, 0];
    assert_eq!(run(&program, &native(libc::SYS_prctl, dumpable)), allow);
}
