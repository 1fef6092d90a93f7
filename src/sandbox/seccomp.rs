//! The seccomp layer beside Landlock: a BPF filter, built with libseccomp from the plan's `Sockets`
//! and installed by the pre-exec helper last before exec, where Landlock does not reach (before ABI
//! 9 it does not restrict `connect(2)` to path-named unix sockets, its TCP rules match a port and
//! never see MPTCP, TCP fast open or the port `listen(2)` binds by itself, and UDP is not covered).
//!
//! The filter settles what the arguments of a call decide alone: socket families and protocols
//! (raw, packet and exotic families always; MPTCP, SCTP and fast open when TCP is restricted; UDP
//! when the policy says none; datagram unix sockets, which name a destination on every send),
//! io_uring (its requests never pass through this filter) and new user namespaces. Every `connect`,
//! and `listen` when TCP bind is restricted, goes to the job's supervisor by user notification
//! (supervise/broker.rs), which decides on the socket and the address it reads, and makes the
//! connection itself: no window between check and use. So does `ioctl(TIOCGPTPEER)`, the other end
//! of a pty the job made, which the supervisor opens for it. If the supervisor is gone, the kernel
//! fails those calls (`ENOSYS`); they never proceed unchecked.
//!
//! This module must never allow a call it cannot judge: what the filter does not refuse or hand
//! over is exactly what needs no decision.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};

use libseccomp::{ScmpAction, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall};

use crate::error::Result;
use crate::sandbox::plan::Sockets;
use crate::sandbox::step_failed;
use crate::sys::pipe::pipe;

/// A socket type is the low four bits of `socket(2)`'s type argument; the rest are flags.
const SOCK_TYPE_MASK: u64 = 0xf;
/// Ints travel in 64-bit registers: compare the low 32 bits, as the kernel reads them.
const INT: u64 = 0xffff_ffff;
/// The highest address family the layer lets through (`AF_NETLINK`).
const LAST_FAMILY: u64 = libc::AF_NETLINK as u64;
/// `IPPROTO_TCP`; anything above it on a stream socket is MPTCP, SCTP or SMC.
const TCP: u64 = libc::IPPROTO_TCP as u64;
/// `SOCK_PACKET`, the packet socket of old (deprecated in libc, still in the kernel).
const SOCK_PACKET: i32 = 10;
/// `TCP_FASTOPEN_CONNECT` and `TCP_ULP` (kernel TLS, MPTCP's subflows), options of `SOL_TCP`.
const TCP_FASTOPEN_CONNECT: u64 = 30;
const TCP_ULP: u64 = 31;

/// The filter for `sockets`, as BPF the kernel takes (`struct sock_filter` array).
pub fn program(sockets: &Sockets) -> Result<Vec<u8>> {
    let ctx = context(sockets).map_err(step_failed("cannot build the seccomp filter"))?;
    let (read, write) = pipe().map_err(step_failed("cannot build the seccomp filter"))?;
    // A filter of a few hundred bytes fits the pipe's buffer: no reader is needed meanwhile.
    ctx.export_bpf(&write)
        .map_err(step_failed("cannot export the seccomp filter"))?;
    drop(write);
    let mut bpf = Vec::new();
    std::fs::File::from(read)
        .read_to_end(&mut bpf)
        .map_err(step_failed("cannot export the seccomp filter"))?;
    Ok(bpf)
}

/// Installs `bpf` on the calling thread (the helper, single-threaded, `no_new_privs` already set)
/// and returns the notification descriptor the supervisor answers on.
pub fn install(bpf: &[u8]) -> Result<OwnedFd> {
    let filter = libc::sock_fprog {
        len: (bpf.len() / std::mem::size_of::<libc::sock_filter>()) as u16,
        filter: bpf.as_ptr() as *mut libc::sock_filter,
    };
    // Once the supervisor has taken a call, only a fatal signal interrupts the wait for its answer
    // (Linux 5.19): a signal must not restart a connect the supervisor is already making.
    let flags = [
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
    ];
    let mut last = std::io::Error::from_raw_os_error(libc::EINVAL);
    for flag in flags {
        // SAFETY: `filter` points at `bpf`, alive for the call; the kernel copies the program.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                flag,
                &filter as *const libc::sock_fprog,
            )
        };
        if fd >= 0 {
            // SAFETY: a new descriptor (close-on-exec) that nothing else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
        last = std::io::Error::last_os_error();
        if last.raw_os_error() != Some(libc::EINVAL) {
            break;
        }
    }
    Err(step_failed("cannot install the seccomp filter")(last))
}

fn arg(index: u32, op: ScmpCompareOp, value: u64) -> ScmpArgCompare {
    ScmpArgCompare::new(index, op, value)
}

fn eq(index: u32, value: u64) -> ScmpArgCompare {
    arg(index, ScmpCompareOp::Equal, value)
}

fn sock_type(value: i32) -> ScmpArgCompare {
    arg(1, ScmpCompareOp::MaskedEqual(SOCK_TYPE_MASK), value as u64)
}

fn context(sockets: &Sockets) -> Result<ScmpFilterContext, libseccomp::error::SeccompError> {
    let mut ctx = ScmpFilterContext::new(ScmpAction::Allow)?;
    // Another ABI (i386, x32) would bring other syscall numbers past the rules: killed at once.
    ctx.set_act_badarch(ScmpAction::KillProcess)?;
    // isolate sets no_new_privs itself, before Landlock.
    ctx.set_ctl_nnp(false)?;
    // Native syscall numbers (libc's, for the architecture isolate was built for): resolving names
    // would cost libseccomp a table search each, on every job's way to its start.
    let sys = |nr: libc::c_long| -> Result<ScmpSyscall, libseccomp::error::SeccompError> {
        Ok(ScmpSyscall::from(nr as i32))
    };
    let refuse = |errno: i32| ScmpAction::Errno(errno);

    // Families: unix, inet, inet6 and netlink; everything else (packet, vsock, bluetooth, can,
    // tipc, rds, xdp, kcm, smc, alg…) as if the kernel lacked it. A value with bits above the
    // 32-bit int set is above AF_NETLINK too.
    let socket = sys(libc::SYS_socket)?;
    ctx.add_rule_conditional(
        refuse(libc::EAFNOSUPPORT),
        socket,
        &[arg(0, ScmpCompareOp::Greater, LAST_FAMILY)],
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
                    arg(2, ScmpCompareOp::Greater, TCP),
                ],
            )?;
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                socket,
                &[family, sock_type(libc::SOCK_SEQPACKET)],
            )?;
        }
    }
    // NETLINK_USERSOCK lets any process send to another's netlink port or group: an IPC door
    // between unrelated processes, unlike the kernel's own netlink families.
    ctx.add_rule_conditional(
        refuse(libc::EPROTONOSUPPORT),
        socket,
        &[
            eq(0, libc::AF_NETLINK as u64),
            arg(
                2,
                ScmpCompareOp::MaskedEqual(INT),
                libc::NETLINK_USERSOCK as u64,
            ),
        ],
    )?;
    let socketpair = sys(libc::SYS_socketpair)?;
    ctx.add_rule_conditional(
        refuse(libc::EAFNOSUPPORT),
        socketpair,
        &[arg(0, ScmpCompareOp::NotEqual, libc::AF_UNIX as u64)],
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

    // Every connect is the supervisor's to judge and to make: a filter sees a pointer, never the
    // address, nor which kind of socket the descriptor is.
    ctx.add_rule(ScmpAction::Notify, sys(libc::SYS_connect)?)?;
    if sockets.tcp_bind.is_some() || sockets.route.is_some() {
        // listen() on an unbound TCP socket binds a port on every address by itself; under a
        // domain allowlist a job listens on loopback only.
        ctx.add_rule(ScmpAction::Notify, sys(libc::SYS_listen)?)?;
    }
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
                &[arg(flags, ScmpCompareOp::MaskedEqual(fastopen), fastopen)],
            )?;
        }
        for option in [TCP_FASTOPEN_CONNECT, TCP_ULP] {
            ctx.add_rule_conditional(
                refuse(libc::EACCES),
                sys(libc::SYS_setsockopt)?,
                &[
                    arg(1, ScmpCompareOp::MaskedEqual(INT), libc::SOL_TCP as u64),
                    arg(2, ScmpCompareOp::MaskedEqual(INT), option),
                ],
            )?;
        }
    }

    // The other end of a pty the job made: Landlock refuses the job the devpts directory (where the
    // user's own terminals are), so the supervisor opens the job's pty's other end for it.
    // (libc's ioctl numbers are u64 here and i32 elsewhere.)
    #[allow(clippy::unnecessary_cast)]
    let peer = libc::TIOCGPTPEER as u64;
    ctx.add_rule_conditional(
        ScmpAction::Notify,
        sys(libc::SYS_ioctl)?,
        &[arg(1, ScmpCompareOp::MaskedEqual(INT), peer)],
    )?;

    // io_uring performs socket (and file) operations without system calls this filter sees.
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        ctx.add_rule(refuse(libc::ENOSYS), sys(call)?)?;
    }
    // A new user namespace brings capabilities inside it (netfilter, mounts in a new namespace:
    // kernel surface, and nothing a job can use under Landlock, which refuses mounts anyway).
    let newuser = libc::CLONE_NEWUSER as u64;
    for call in [libc::SYS_unshare, libc::SYS_clone] {
        ctx.add_rule_conditional(
            refuse(libc::EPERM),
            sys(call)?,
            &[arg(0, ScmpCompareOp::MaskedEqual(newuser), newuser)],
        )?;
    }
    // clone3 passes its flags in memory: as if the kernel lacked it, so that libc falls back to
    // clone, whose flags the rule above sees.
    ctx.add_rule(refuse(libc::ENOSYS), sys(libc::SYS_clone3)?)?;
    // The user's session and user keyrings (Kerberos tickets, cached passwords).
    for call in [libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key] {
        ctx.add_rule(refuse(libc::EPERM), sys(call)?)?;
    }
    Ok(ctx)
}

#[cfg(test)]
mod tests {
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
        }
    }

    #[test]
    fn every_variant_of_the_policy_builds_a_filter() {
        for udp in [true, false] {
            for unix_datagram in [true, false] {
                for restricted in [None, Some(vec![443])] {
                    let sockets = Sockets {
                        udp,
                        unix_datagram,
                        tcp_connect: restricted.clone(),
                        tcp_bind: restricted.clone(),
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
