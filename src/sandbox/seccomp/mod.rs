//! The seccomp layer beside Landlock: a BPF filter, compiled in Rust (bpf.rs) from the plan's
//! `Sockets` and installed by the pre-exec helper last before exec, where Landlock does not reach (before ABI
//! 9 it does not restrict `connect(2)` to path-named unix sockets, its TCP rules match a port and
//! never see MPTCP, TCP fast open or the port `listen(2)` binds by itself, and UDP is not covered).
//!
//! The filter settles what the arguments of a call decide alone: socket families and protocols
//! (raw, packet and exotic families always; MPTCP, SCTP and fast open when TCP is restricted; UDP
//! when the policy says none; datagram unix sockets, which name a destination on every send),
//! io_uring (its requests never pass through this filter) and new user namespaces. Every `connect`,
//! and `listen` when TCP bind is restricted, goes to the job's supervisor by user notification
//! (`supervise::broker`), which decides on the socket and the address it reads, and makes the
//! connection itself: no window between check and use. So does `ioctl(TIOCGPTPEER)`, the other end
//! of a pty the job made, which the supervisor opens for it. If the supervisor is gone, the kernel
//! fails those calls (`ENOSYS`); they never proceed unchecked.
//!
//! This module must never allow a call it cannot judge: what the filter does not refuse or hand
//! over is exactly what needs no decision.

mod assembler;
mod bpf;
#[cfg(test)]
mod bpf_tests;
mod filter;
#[cfg(test)]
mod interpreter;
mod search;
mod surface;

pub(crate) use surface::{BY_PID, IPC, SIGNALS};
#[cfg(test)]
mod tests;

use std::os::fd::{FromRawFd, OwnedFd};

use crate::error::Result;
use crate::sandbox::plan::{Judge, Sockets};
use crate::sandbox::step_failed;

use filter::context;

/// The filter for `sockets`, as BPF the kernel takes (`struct sock_filter` array, in this
/// machine's byte order).
pub fn program(sockets: &Sockets) -> Result<Vec<u8>> {
    let program = context(sockets)
        .and_then(|filter| filter.compile())
        .map_err(step_failed("cannot build the seccomp filter"))?;
    let mut bpf = Vec::with_capacity(program.len() * std::mem::size_of::<libc::sock_filter>());
    for instruction in &program {
        bpf.extend_from_slice(&instruction.code.to_ne_bytes());
        bpf.push(instruction.jt);
        bpf.push(instruction.jf);
        bpf.extend_from_slice(&instruction.k.to_ne_bytes());
    }
    Ok(bpf)
}

/// Installs `bpf` on the calling thread (the helper, single-threaded, `no_new_privs` already set)
/// and returns the notification descriptor the supervisor answers on; `None` for a filter the
/// outer job's supervisor judges for ([`Judge::OuterJob`]), which hands nothing over.
pub fn install(bpf: &[u8], judge: Judge) -> Result<Option<OwnedFd>> {
    let filter = libc::sock_fprog {
        len: (bpf.len() / std::mem::size_of::<libc::sock_filter>()) as u16,
        filter: bpf.as_ptr() as *mut libc::sock_filter,
    };
    if judge == Judge::OuterJob {
        // SAFETY: as below; no flags, so the call returns 0 or -1, never a descriptor.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &filter as *const libc::sock_fprog,
            )
        };
        return match rc {
            0 => Ok(None),
            _ => Err(step_failed("cannot install the seccomp filter")(
                std::io::Error::last_os_error(),
            )),
        };
    }
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
            return Ok(Some(unsafe { OwnedFd::from_raw_fd(fd as i32) }));
        }
        last = std::io::Error::last_os_error();
        if last.raw_os_error() != Some(libc::EINVAL) {
            break;
        }
    }
    Err(step_failed("cannot install the seccomp filter")(last))
}
