//! Playing the user at the keyboard and the screen of the user's terminal, with deadlines.

use super::*;

/// Plays the user at `screen`: types `keys` as fast as the terminal takes them and collects
/// what is shown, until `done` holds. Returns what was shown and how many keys were typed.
pub(super) fn exchange(
    screen: &OwnedFd,
    keys: &[u8],
    done: impl Fn(&[u8]) -> bool,
) -> (Vec<u8>, usize) {
    set_nonblocking(screen.as_fd()).expect("non-blocking screen");
    let deadline = Instant::now() + TIMEOUT;
    let (mut shown, mut typed) = (Vec::new(), 0);
    let mut buf = [0u8; 4096];
    while !done(&shown) {
        assert!(
            Instant::now() < deadline,
            "timed out; typed {typed} bytes, shown: {:?}",
            String::from_utf8_lossy(&shown)
        );
        let mut events = libc::POLLIN;
        if typed < keys.len() {
            events |= libc::POLLOUT;
        }
        let mut pfd = libc::pollfd {
            fd: screen.as_raw_fd(),
            events,
            revents: 0,
        };
        // SAFETY: one pollfd.
        if unsafe { libc::poll(&mut pfd, 1, 100) } <= 0 {
            continue;
        }
        if pfd.revents & libc::POLLIN != 0 {
            match read(screen.as_fd(), &mut buf) {
                Ok(n) => shown.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("reading the screen: {e}"),
            }
        }
        if pfd.revents & libc::POLLOUT != 0 && typed < keys.len() {
            let rest = &keys[typed..];
            // SAFETY: write reads at most `rest.len()` bytes.
            let n = unsafe { libc::write(screen.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
            if n > 0 {
                typed += n as usize;
            }
        }
    }
    (shown, typed)
}

/// Reads `len` bytes from `fd` (made non-blocking), or what came before the deadline.
pub(super) fn read_within(fd: &OwnedFd, len: usize) -> Vec<u8> {
    set_nonblocking(fd.as_fd()).expect("non-blocking");
    let deadline = Instant::now() + TIMEOUT;
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    while got.len() < len && Instant::now() < deadline {
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd.
        if unsafe { libc::poll(&mut pfd, 1, 100) } <= 0 {
            continue;
        }
        match read(fd.as_fd(), &mut buf) {
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("read: {e}"),
        }
    }
    got
}
