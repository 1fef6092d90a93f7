//! The seccomp filter's rules, in the order they are added: socket families, the protocols that
//! slip past Landlock's TCP hooks, unix datagram sockets, the calls handed over to the supervisor,
//! port sharing, and then those of surface.rs (terminals, the kernel surface a job never needs).
//! Every rule refuses a call or hands it over, or makes one harmless: none lets through what it
//! cannot judge.

use super::bpf::{ArgCmp, CmpOp, Filter, FilterAction, FilterError, Syscall};
use super::surface;
use crate::sandbox::plan::{Judge, Sockets};

/// A socket type is the low four bits of `socket(2)`'s type argument; the rest are flags.
const SOCK_TYPE_MASK: u64 = 0xf;
/// Ints travel in 64-bit registers: compare the low 32 bits, as the kernel reads them.
pub(super) const INT: u64 = 0xffff_ffff;
/// The highest address family the layer lets through (`AF_NETLINK`).
const LAST_FAMILY: u64 = libc::AF_NETLINK as u64;
/// `IPPROTO_TCP`; anything above it on a stream socket is MPTCP, SCTP or SMC.
const TCP: u64 = libc::IPPROTO_TCP as u64;
/// `SOCK_PACKET`, the packet socket of old (deprecated in libc, still in the kernel).
const SOCK_PACKET: i32 = 10;
/// `TCP_FASTOPEN_CONNECT` and `TCP_ULP` (kernel TLS, MPTCP's subflows), options of `SOL_TCP`.
const TCP_FASTOPEN_CONNECT: u64 = 30;
const TCP_ULP: u64 = 31;

pub(super) fn arg(index: u32, op: CmpOp, value: u64) -> ArgCmp {
    ArgCmp::new(index, op, value)
}

fn eq(index: u32, value: u64) -> ArgCmp {
    arg(index, CmpOp::Equal, value)
}

fn sock_type(value: i32) -> ArgCmp {
    arg(1, CmpOp::MaskedEqual(SOCK_TYPE_MASK), value as u64)
}

/// Native syscall numbers (libc's, for the architecture isolate was built for).
pub(super) fn sys(nr: libc::c_long) -> Result<Syscall, FilterError> {
    Syscall::native(nr)
}

pub(super) fn refuse(errno: i32) -> FilterAction {
    FilterAction::Errno(errno)
}

/// The filter's rules for `sockets`. Another ABI (i386, x32) would bring other syscall numbers
/// past them: the program kills it at once (bpf.rs).
pub(super) fn context(sockets: &Sockets) -> Result<Filter, FilterError> {
    let mut ctx = Filter::new(FilterAction::Allow);
    families(&mut ctx)?;
    inet(&mut ctx, sockets)?;
    netlink(&mut ctx)?;
    unix(&mut ctx, sockets)?;
    handed_over(&mut ctx, sockets)?;
    tcp_bypasses(&mut ctx, sockets)?;
    port_sharing(&mut ctx)?;
    pty_peer(&mut ctx, sockets)?;
    surface::terminal_input(&mut ctx)?;
    if sockets.judge == Judge::Supervisor {
        surface::dumpable(&mut ctx)?;
    }
    surface::file_owner(&mut ctx)?;
    surface::kernel_surface(&mut ctx, sockets)?;
    surface::signals(&mut ctx, sockets)?;
    Ok(ctx)
}

/// Socket families.
fn families(ctx: &mut Filter) -> Result<(), FilterError> {
    // Families: unix, inet, inet6 and netlink; everything else (packet, vsock, bluetooth, can,
    // tipc, rds, xdp, kcm, smc, alg…) as if the kernel lacked it. A value with bits above the
    // 32-bit int set is above AF_NETLINK too.
    let socket = sys(libc::SYS_socket)?;
    ctx.add_rule_conditional(
        refuse(libc::EAFNOSUPPORT),
        socket,
        &[arg(0, CmpOp::Greater, LAST_FAMILY)],
    )?;
    let allowed = [
        libc::AF_UNIX,
        libc::AF_INET,
        libc::AF_INET6,
        libc::AF_NETLINK,
    ];
    for family in 0..LAST_FAMILY as i32 {
        if !allowed.contains(&family) {
            ctx.add_rule_conditional(refuse(libc::EAFNOSUPPORT), socket, &[eq(0, family as u64)])?;
        }
    }
    Ok(())
}

/// Raw, packet, DCCP, UDP and the transports beside TCP, on inet sockets.
fn inet(ctx: &mut Filter, sockets: &Sockets) -> Result<(), FilterError> {
    let socket = sys(libc::SYS_socket)?;
    for family in [libc::AF_INET, libc::AF_INET6] {
        let family = eq(0, family as u64);
        // Raw and packet sockets see and forge every packet: never.
        for kind in [libc::SOCK_RAW, SOCK_PACKET] {
            ctx.add_rule_conditional(refuse(libc::EPERM), socket, &[family, sock_type(kind)])?;
        }
        // DCCP slips past Landlock's TCP hooks.
        ctx.add_rule_conditional(
            refuse(libc::EACCES),
            socket,
            &[family, sock_type(libc::SOCK_DCCP)],
        )?;
        if !sockets.udp {
            // UDP, UDP-Lite and ICMP echo ("ping") sockets.
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                socket,
                &[family, sock_type(libc::SOCK_DGRAM)],
            )?;
        }
        if !sockets.tcp_open() {
            // MPTCP (262), SMC (256) and SCTP (132) on stream sockets, SCTP on seqpacket ones:
            // transports Landlock's TCP rules do not see.
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                socket,
                &[
                    family,
                    sock_type(libc::SOCK_STREAM),
                    arg(2, CmpOp::Greater, TCP),
                ],
            )?;
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                socket,
                &[family, sock_type(libc::SOCK_SEQPACKET)],
            )?;
        }
    }
    Ok(())
}

/// The netlink family that is IPC between processes.
fn netlink(ctx: &mut Filter) -> Result<(), FilterError> {
    let socket = sys(libc::SYS_socket)?;
    // NETLINK_USERSOCK lets any process send to another's netlink port or group: an IPC door
    // between unrelated processes, unlike the kernel's own netlink families.
    ctx.add_rule_conditional(
        refuse(libc::EPROTONOSUPPORT),
        socket,
        &[
            eq(0, libc::AF_NETLINK as u64),
            arg(2, CmpOp::MaskedEqual(INT), libc::NETLINK_USERSOCK as u64),
        ],
    )?;
    Ok(())
}

/// Socket pairs and datagram unix sockets.
fn unix(ctx: &mut Filter, sockets: &Sockets) -> Result<(), FilterError> {
    let socket = sys(libc::SYS_socket)?;
    let socketpair = sys(libc::SYS_socketpair)?;
    ctx.add_rule_conditional(
        refuse(libc::EAFNOSUPPORT),
        socketpair,
        &[arg(0, CmpOp::NotEqual, libc::AF_UNIX as u64)],
    )?;
    if !sockets.unix_datagram {
        // A datagram socket names its destination on each send (sendmsg's msg_name, which no
        // filter can read): refused, pairs included. SOCK_RAW is a datagram socket for AF_UNIX.
        let unix = eq(0, libc::AF_UNIX as u64);
        for call in [socket, socketpair] {
            for kind in [libc::SOCK_DGRAM, libc::SOCK_RAW] {
                ctx.add_rule_conditional(refuse(libc::EACCES), call, &[unix, sock_type(kind)])?;
            }
        }
    }
    Ok(())
}

/// The calls the supervisor judges and makes.
fn handed_over(ctx: &mut Filter, sockets: &Sockets) -> Result<(), FilterError> {
    if sockets.judge == Judge::OuterJob {
        // The outer job's filter hands them to its supervisor, under the outer policy; a unix
        // socket served by another process of the outer job counts as the job's own there, so
        // this job makes no unix sockets but pairs (a pair reaches nothing it did not make).
        let unix = eq(0, libc::AF_UNIX as u64);
        for kind in [libc::SOCK_STREAM, libc::SOCK_SEQPACKET] {
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                sys(libc::SYS_socket)?,
                &[unix, sock_type(kind)],
            )?;
        }
        if sockets.tcp_closed() {
            // The outer judge would connect them, past this job's Landlock TCP rules.
            for family in [libc::AF_INET, libc::AF_INET6] {
                ctx.add_rule_conditional(
                    refuse(libc::EACCES),
                    sys(libc::SYS_socket)?,
                    &[eq(0, family as u64), sock_type(libc::SOCK_STREAM)],
                )?;
            }
        }
        return Ok(());
    }
    // Every connect is the supervisor's to judge and to make: a filter sees a pointer, never the
    // address, nor which kind of socket the descriptor is.
    ctx.add_rule(FilterAction::Notify, sys(libc::SYS_connect)?)?;
    // SO_REUSEADDR shares a UDP port with a socket that set it, but not a TCP one (inet/reuse.rs).
    ctx.add_rule_conditional(
        FilterAction::Notify,
        sys(libc::SYS_setsockopt)?,
        &socket_option(libc::SO_REUSEADDR),
    )?;
    // listen() on an unbound TCP socket binds a port on every address by itself; under a domain
    // allowlist a job listens on loopback only; and never beside another's localhost service on
    // the other family's loopback (broker/inet/shadow.rs).
    ctx.add_rule(FilterAction::Notify, sys(libc::SYS_listen)?)?;
    // Every bind: an abstract unix name of the job's choosing is refused (outsiders would reach
    // the job's server by it); the rest the kernel makes (broker/bind.rs).
    ctx.add_rule(FilterAction::Notify, sys(libc::SYS_bind)?)?;
    Ok(())
}

/// The ways past connect's checks when TCP is restricted.
fn tcp_bypasses(ctx: &mut Filter, sockets: &Sockets) -> Result<(), FilterError> {
    if !sockets.tcp_open() {
        // TCP fast open connects (and sends) inside sendto/sendmsg, past connect's checks.
        let fastopen = libc::MSG_FASTOPEN as u64;
        for (call, flags) in [
            (libc::SYS_sendto, 3),
            (libc::SYS_sendmsg, 2),
            (libc::SYS_sendmmsg, 3),
        ] {
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                sys(call)?,
                &[arg(flags, CmpOp::MaskedEqual(fastopen), fastopen)],
            )?;
        }
        for option in [TCP_FASTOPEN_CONNECT, TCP_ULP] {
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                sys(libc::SYS_setsockopt)?,
                &[
                    arg(1, CmpOp::MaskedEqual(INT), libc::SOL_TCP as u64),
                    arg(2, CmpOp::MaskedEqual(INT), option),
                ],
            )?;
        }
    }
    Ok(())
}

/// `SO_REUSEPORT`: with it, a socket binds a port that another socket of the same user bound
/// with it, and the kernel hands it part of that port's connections (TCP) or datagrams (UDP): a
/// job would take some of the clients of a localhost service of the user's. Refused as a kernel
/// without the option refuses it, so that a server that asks for it where it can binds alone.
fn port_sharing(ctx: &mut Filter) -> Result<(), FilterError> {
    ctx.add_rule_conditional(
        refuse(libc::ENOPROTOOPT),
        sys(libc::SYS_setsockopt)?,
        &socket_option(libc::SO_REUSEPORT),
    )?;
    Ok(())
}

/// The arguments of `setsockopt(_, SOL_SOCKET, option, ...)` (the kernel reads both as ints).
fn socket_option(option: libc::c_int) -> [ArgCmp; 2] {
    [
        arg(1, CmpOp::MaskedEqual(INT), libc::SOL_SOCKET as u64),
        arg(2, CmpOp::MaskedEqual(INT), option as u64),
    ]
}

/// A pty's other end, opened by the supervisor (the outer job's, which its filter asks).
fn pty_peer(ctx: &mut Filter, sockets: &Sockets) -> Result<(), FilterError> {
    if sockets.judge == Judge::OuterJob {
        return Ok(());
    }
    // The other end of a pty the job made: Landlock refuses the job the devpts directory (where the
    // user's own terminals are), so the supervisor opens the job's pty's other end for it.
    // (libc's ioctl numbers are u64 here and i32 elsewhere.)
    #[allow(clippy::unnecessary_cast)]
    let peer = libc::TIOCGPTPEER as u64;
    ctx.add_rule_conditional(
        FilterAction::Notify,
        sys(libc::SYS_ioctl)?,
        &[arg(1, CmpOp::MaskedEqual(INT), peer)],
    )?;
    Ok(())
}
