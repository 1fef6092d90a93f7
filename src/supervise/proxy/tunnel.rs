//! Relaying the bytes of one proxied connection both ways, with splice(2) through a pipe per
//! direction (the data never enters isolate's memory), each direction on a thread of its own.
//! When one side ends its sending, the other side's sending is shut down; when either fails, both
//! are. It must never buffer without bound nor outlive the connection it relays.

use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// How much one splice moves at most (and the pipe's size, where the kernel allows it).
const CHUNK: usize = 1 << 20;

/// Sends `first` (bytes the proxy read past the request's head) to `upstream`, then relays until
/// both directions are done; returns the bytes sent up (client to upstream) and down.
pub fn relay(client: &TcpStream, upstream: &TcpStream, first: &[u8]) -> (u64, u64) {
    let mut up = 0u64;
    if !first.is_empty() {
        let mut writer = upstream;
        if writer.write_all(first).is_err() {
            let _ = client.shutdown(Shutdown::Both);
            let _ = upstream.shutdown(Shutdown::Both);
            return (0, 0);
        }
        up = first.len() as u64;
    }
    let (Ok(client_up), Ok(upstream_up)) = (client.try_clone(), upstream.try_clone()) else {
        let _ = client.shutdown(Shutdown::Both);
        let _ = upstream.shutdown(Shutdown::Both);
        return (up, 0);
    };
    let rising = std::thread::Builder::new()
        .name("isolate-proxy-up".into())
        .spawn(move || one_way(&client_up, &upstream_up));
    let down = one_way(upstream, client);
    let sent = match rising {
        Ok(thread) => thread.join().unwrap_or(0),
        Err(_) => {
            let _ = client.shutdown(Shutdown::Both);
            let _ = upstream.shutdown(Shutdown::Both);
            0
        }
    };
    (up + sent, down)
}

fn pipe() -> Option<(OwnedFd, OwnedFd)> {
    let (r, w) = crate::sys::pipe::pipe().ok()?;
    // A larger pipe moves more per splice; refused above the system's limit, which is fine.
    // SAFETY: F_SETPIPE_SZ only resizes the pipe's buffer.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
    Some((r, w))
}

/// splice(2) without `SPLICE_F_MORE`, which on a socket is `MSG_MORE`: the kernel would hold a
/// small write back for up to 200 ms waiting for more (a request's last bytes, one byte of a
/// prompt's answer).
fn splice(from: RawFd, to: RawFd, len: usize) -> isize {
    loop {
        // SAFETY: splice between descriptors the caller holds; no offsets (sockets and pipes).
        let n = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE,
            )
        };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return n;
    }
}

/// Moves everything `from` sends to `to`, then shuts `to`'s sending down; the bytes moved.
fn one_way(from: &TcpStream, to: &TcpStream) -> u64 {
    let Some((read, write)) = pipe() else {
        let _ = from.shutdown(Shutdown::Both);
        let _ = to.shutdown(Shutdown::Both);
        return 0;
    };
    let mut moved = 0u64;
    let failed = loop {
        let n = splice(from.as_raw_fd(), write.as_raw_fd(), CHUNK);
        if n == 0 {
            break false;
        }
        if n < 0 {
            break true;
        }
        let mut left = n as usize;
        while left > 0 {
            let m = splice(read.as_raw_fd(), to.as_raw_fd(), left);
            if m <= 0 {
                break;
            }
            left -= m as usize;
        }
        if left > 0 {
            break true;
        }
        moved += n as u64;
    };
    if failed {
        let _ = from.shutdown(Shutdown::Both);
        let _ = to.shutdown(Shutdown::Both);
    } else {
        let _ = to.shutdown(Shutdown::Write);
    }
    moved
}
