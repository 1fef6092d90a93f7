use std::collections::BTreeMap;
use std::io::{Read, Seek};

use super::bpf::{ArgCmp, CmpOp, Filter, FilterAction, AUDIT_ARCH};
use super::interpreter::{check, run, Call};
use super::*;
use crate::sandbox::plan::{features, rules, Kernel, Route};
use crate::sandbox::policy;

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
        judge_signals: false,
    }
}

/// Every way a policy can shape the filter (UDP, datagram unix sockets, TCP open, partly or
/// wholly restricted, whose judge), and the sockets of every built-in profile, alone and nested in
/// another job.
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
    let kernel = Kernel {
        landlock_abi: Some(7),
        seccomp: true,
    };
    for (name, _) in policy::BUILTIN {
        let loaded = policy::load(name).unwrap();
        let states = features(&loaded.policy, kernel);
        let mut plan = rules(&loaded.policy, 7, &[], &states);
        // A domain allowlist's ports, once the supervisor has started the proxy.
        plan.route_through(40000, &[41000, 41001], &[]);
        let sockets = plan
            .sockets
            .unwrap_or_else(|| panic!("{name}: no seccomp layer"));
        if let Some(route) = &sockets.route {
            assert_eq!(
                route,
                &Route {
                    proxy: Some(40000),
                    own: vec![41000, 41001],
                    named: Vec::new(),
                }
            );
        }
        let nested = Sockets {
            judge: Judge::OuterJob,
            ..sockets.clone()
        };
        variants.push((format!("profile {name}"), sockets));
        variants.push((format!("profile {name}, nested"), nested));
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

/// The rules of `filter` compiled by libseccomp: the same calls in the same order, on a context
/// that kills another ABI and leaves `no_new_privs` to isolate.
fn libseccomp_program(filter: &Filter) -> Vec<libc::sock_filter> {
    use libseccomp::{ScmpAction, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall};
    let action = |action: FilterAction| match action {
        FilterAction::Allow => ScmpAction::Allow,
        FilterAction::Errno(errno) => ScmpAction::Errno(errno),
        FilterAction::KillProcess => ScmpAction::KillProcess,
        FilterAction::Notify => ScmpAction::Notify,
    };
    let op = |op: CmpOp| match op {
        CmpOp::Equal => ScmpCompareOp::Equal,
        CmpOp::NotEqual => ScmpCompareOp::NotEqual,
        CmpOp::Greater => ScmpCompareOp::Greater,
        CmpOp::MaskedEqual(mask) => ScmpCompareOp::MaskedEqual(mask),
    };
    let mut ctx = ScmpFilterContext::new(action(filter.default_action())).unwrap();
    ctx.set_act_badarch(ScmpAction::KillProcess).unwrap();
    ctx.set_ctl_nnp(false).unwrap();
    for rule in filter.rules() {
        let syscall = ScmpSyscall::from(rule.syscall.number() as i32);
        let conditions: Vec<ScmpArgCompare> = rule
            .conditions
            .iter()
            .map(|c| ScmpArgCompare::new(c.arg, op(c.op), c.value))
            .collect();
        match conditions.is_empty() {
            true => ctx.add_rule(action(rule.action), syscall),
            false => ctx.add_rule_conditional(action(rule.action), syscall, &conditions),
        }
        .unwrap();
    }
    let mut file = tempfile::tempfile().unwrap();
    ctx.export_bpf(&file).unwrap();
    file.rewind().unwrap();
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    bytes
        .chunks_exact(8)
        .map(|i| libc::sock_filter {
            code: u16::from_ne_bytes([i[0], i[1]]),
            jt: i[2],
            jf: i[3],
            k: u32::from_ne_bytes([i[4], i[5], i[6], i[7]]),
        })
        .collect()
}

/// Argument values worth trying against `conditions` (those of one argument of one call): each
/// value compared, next to it, with the bits outside its mask set or one inside flipped, with the
/// high word set or flipped; and the edges of 32 and 64 bits.
fn candidates<'a>(conditions: impl Iterator<Item = &'a ArgCmp>) -> Vec<u64> {
    let mut base = vec![0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, u64::MAX];
    for c in conditions {
        let v = c.value;
        base.extend([v, v.wrapping_add(1), v.wrapping_sub(1)]);
        if let CmpOp::MaskedEqual(mask) = c.op {
            let masked = v & mask;
            let lowest = mask & mask.wrapping_neg();
            let highest = 1u64.checked_shl(63 - mask.leading_zeros()).unwrap_or(0);
            base.extend([masked, masked | !mask, masked ^ lowest, masked ^ highest]);
            // Flags beside a socket type, as programs pass them.
            base.extend([masked | libc::SOCK_CLOEXEC as u64 | libc::SOCK_NONBLOCK as u64]);
        }
    }
    let mut values: Vec<u64> = base
        .into_iter()
        .flat_map(|b| [b, b | 0xffff_ffff_0000_0000, b ^ 1 << 32])
        .collect();
    values.sort_unstable();
    values.dedup();
    values
}

/// Every combination of the candidates of each argument some rule of the call compares; the
/// others take values that change from one call to the next.
fn calls(nr: u32, arch: u32, conditions: &[&ArgCmp], out: &mut Vec<Call>) {
    let per_arg: Vec<Vec<u64>> = (0..6)
        .map(|arg| {
            let mine: Vec<&ArgCmp> = conditions
                .iter()
                .copied()
                .filter(|c| c.arg == arg)
                .collect();
            match mine.is_empty() {
                true => Vec::new(),
                false => candidates(mine.into_iter()),
            }
        })
        .collect();
    let noise = [0, u64::MAX, 0xdead_beef_0000_0001, 0x5555_5555];
    let total: usize = per_arg.iter().map(|v| v.len().max(1)).product();
    for n in 0..total {
        let mut rest = n;
        let mut args = [0u64; 6];
        for (arg, values) in per_arg.iter().enumerate() {
            args[arg] = match values.len() {
                0 => noise[(n + arg) % noise.len()],
                len => {
                    let value = values[rest % len];
                    rest /= len;
                    value
                }
            };
        }
        out.push(Call { nr, arch, args });
    }
}

/// The filter, compiled here and by libseccomp from the same rules, gives every call the same
/// action (and errno): every system call number up to 520, x32's and -1, other ABIs, each with
/// argument values at, around and past the values its rules compare.
#[test]
fn the_filter_does_what_libseccomp_made_of_the_same_rules() {
    let mut seen: Vec<Vec<super::bpf::Rule>> = Vec::new();
    for (name, sockets) in variants() {
        let filter = context(&sockets).unwrap();
        // Each set of rules once: every profile's is one of the variants'.
        if seen.iter().any(|rules| rules.as_slice() == filter.rules()) {
            continue;
        }
        seen.push(filter.rules().to_vec());
        let ours = filter.compile().unwrap();
        let theirs = libseccomp_program(&filter);
        check(&ours).unwrap_or_else(|e| panic!("{name}: {e}"));
        check(&theirs).unwrap_or_else(|e| panic!("{name}, libseccomp's: {e}"));
        let mut by_call: BTreeMap<u32, Vec<&ArgCmp>> = BTreeMap::new();
        for rule in filter.rules() {
            by_call
                .entry(rule.syscall.number())
                .or_default()
                .extend(rule.conditions.iter());
        }
        let mut inputs = Vec::new();
        let x32 = [
            0x4000_0000,
            0x4000_0000 | libc::SYS_connect as u32,
            0x4000_0200,
        ];
        let high = [
            0x3fff_ffff,
            0x7fff_ffff,
            0x8000_0000,
            u32::MAX - 1,
            u32::MAX,
        ];
        for nr in (0..=520).chain(x32).chain(high) {
            let conditions = by_call.get(&nr).map_or(&[][..], Vec::as_slice);
            calls(nr, AUDIT_ARCH, conditions, &mut inputs);
        }
        // Other ABIs: i386, x86_64, aarch64, arm, riscv64, none.
        for arch in [
            0x4000_0003,
            0xc000_003e,
            0xc000_00b7,
            0x4000_0028,
            0xc000_00f3,
            0,
        ] {
            if arch != AUDIT_ARCH {
                for nr in [0, libc::SYS_connect as u32, libc::SYS_socket as u32, 511] {
                    calls(nr, arch, &[], &mut inputs);
                }
            }
        }
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for call in &inputs {
            let (a, b) = (run(&ours, call), run(&theirs, call));
            assert_eq!(a, b, "{name}: {call:x?}: ours {a:#x}, libseccomp's {b:#x}");
            *counts.entry(a & libc::SECCOMP_RET_ACTION_FULL).or_default() += 1;
        }
        // Every action the rules use was met.
        for action in [
            libc::SECCOMP_RET_ALLOW,
            libc::SECCOMP_RET_ERRNO,
            libc::SECCOMP_RET_KILL_PROCESS,
        ] {
            assert!(counts.contains_key(&action), "{name}: {counts:?}");
        }
        if sockets.judge == Judge::Supervisor {
            assert!(counts.contains_key(&libc::SECCOMP_RET_USER_NOTIF), "{name}");
        }
        eprintln!(
            "{name}: {} calls, ours {} instructions, libseccomp's {}",
            inputs.len(),
            ours.len(),
            theirs.len()
        );
    }
}
