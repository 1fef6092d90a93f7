//! `SO_REUSEADDR`, which the broker sets on the job's socket itself. On a TCP socket it lets a
//! server bind a port its last run left in TIME_WAIT, and nearly every server asks for it. On a
//! UDP socket it lets one more socket bind a port already bound with it, of any user, and the
//! kernel then hands the newest socket all of the port's datagrams: a job would take those of a
//! localhost service (a DNS forwarder, a metrics collector) that set it, as many do. A filter sees
//! a descriptor number, never which kind of socket it names, so the call comes here: on an inet
//! socket that is not a stream, turning the option on is refused as a kernel without it refuses
//! it (ENOPROTOOPT); everything else is set as asked.

use std::os::fd::{AsRawFd, OwnedFd};

use crate::sandbox::notify::Answer;
use crate::supervise::broker::connection::option;
use crate::supervise::broker::{errno, Verdict};

/// The verdict on `setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, value)`, `value` as the caller's
/// memory held it when read.
pub fn reuse_address(socket: &OwnedFd, value: libc::c_int) -> Verdict {
    let inet = matches!(
        option(socket, libc::SO_DOMAIN),
        Ok(libc::AF_INET) | Ok(libc::AF_INET6)
    );
    if value != 0 && inet && option(socket, libc::SO_TYPE) != Ok(libc::SOCK_STREAM) {
        return Verdict::Done(Answer::Errno(libc::ENOPROTOOPT));
    }
    // SAFETY: setsockopt reads one int of ours, on a descriptor the broker owns.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    Verdict::Done(match rc {
        0 => Answer::Value(0),
        _ => Answer::Errno(errno()),
    })
}
