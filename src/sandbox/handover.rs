//! The status socket between the supervisor and the job's first process (its forked child, or the
//! pre-exec helper that child execs; "the helper" below), both ends of it. The supervisor sends the
//! seccomp filter it built while the helper was restricting itself (a length, then the BPF); the
//! helper sends back the filter's notification descriptor (one byte with SCM_RIGHTS) and, if CMD
//! cannot be executed, a status byte and the reason. exec closes the helper's end: the end of the
//! stream with no report means CMD is running.

use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags, UnixAddr};

use crate::error::{Error, Result};
use crate::sandbox::step_failed;

/// The byte that carries the seccomp listener.
const LISTENER: u8 = b'L';
/// A filter is a few hundred bytes; anything past this is not one.
const FILTER_MAX: usize = 64 * 1024;

/// Supervisor: the filter for the helper to install (empty when the supervisor could not build
/// one: the helper then fails, saying so).
pub fn send_filter(socket: &OwnedFd, bpf: &[u8]) -> std::io::Result<()> {
    let mut stream = std::fs::File::from(socket.try_clone()?);
    stream.write_all(&(bpf.len() as u32).to_ne_bytes())?;
    stream.write_all(bpf)
}

/// Helper: the filter the supervisor sent.
pub fn receive_filter(fd: RawFd) -> Result<Vec<u8>> {
    // SAFETY: a duplicate of the status descriptor, owned by the File it goes into.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(step_failed("cannot read the seccomp filter")(
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: `dup` is a new descriptor nothing else owns.
    let mut stream = unsafe { std::fs::File::from_raw_fd(dup) };
    let mut len = [0u8; 4];
    stream
        .read_exact(&mut len)
        .map_err(step_failed("cannot read the seccomp filter"))?;
    let len = u32::from_ne_bytes(len) as usize;
    if len == 0 || len > FILTER_MAX {
        return Err(Error::SeccompFilterMissing { length: len });
    }
    let mut bpf = vec![0u8; len];
    stream
        .read_exact(&mut bpf)
        .map_err(step_failed("cannot read the seccomp filter"))?;
    Ok(bpf)
}

/// Helper: hands the filter's notification descriptor to the supervisor and closes it here, so
/// that no process of the job holds it (one that could answer its own calls would let them all
/// through).
pub fn send_listener(fd: RawFd, listener: OwnedFd) -> Result<()> {
    let fds = [listener.as_raw_fd()];
    let byte = [LISTENER];
    let iov = [IoSlice::new(&byte)];
    sendmsg::<UnixAddr>(
        fd,
        &iov,
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .map_err(step_failed(
        "cannot hand the seccomp listener to the supervisor",
    ))?;
    drop(listener);
    Ok(())
}

/// Supervisor: reads the status socket to its end: the seccomp listener, if the helper sent one,
/// and the failure report (empty when CMD was exec'd).
pub fn read_status(socket: &OwnedFd) -> (Option<OwnedFd>, Vec<u8>) {
    let mut listener = None;
    let mut report = Vec::new();
    loop {
        let mut buf = [0u8; 4096];
        let mut space = nix::cmsg_space!([RawFd; 1]);
        let mut iov = [IoSliceMut::new(&mut buf)];
        let (bytes, fds) = match recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) => {
                let fds: Vec<RawFd> = msg
                    .cmsgs()
                    .into_iter()
                    .flatten()
                    .flat_map(|c| match c {
                        ControlMessageOwned::ScmRights(fds) => fds,
                        _ => Vec::new(),
                    })
                    .collect();
                (msg.bytes, fds)
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        };
        let mut data = &buf[..bytes];
        for fd in fds {
            // SAFETY: a descriptor the kernel just installed for us; nothing else owns it.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            if listener.is_none() && data.first() == Some(&LISTENER) {
                data = &data[1..];
                listener = Some(fd);
            }
        }
        if bytes == 0 {
            break;
        }
        report.extend_from_slice(data);
    }
    (listener, report)
}
