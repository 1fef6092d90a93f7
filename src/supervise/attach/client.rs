//! `isolate attach`'s side of the channel: the user's terminal raw (restored exactly on every way
//! out, as in interactive mode), keystrokes and window sizes sent as frames, the job's screen and
//! output written as they come. The detach key pressed twice leaves the job running; pressed once
//! and followed by anything else, both keys go to the job.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use signal_hook::consts::SIGWINCH;

use super::wire::Frame;
use crate::supervise::pty::{read, winsize_of, RawMode};
use crate::sys::pipe::pipe;

/// How an attach ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// The user pressed the detach key twice (or closed the input): the job runs on.
    Detached,
    /// The supervisor let go: the job's terminal ended, or another attach took over.
    Released,
}

/// Attaches the user's terminal (descriptors 0 and 1) to the job behind `socket` until the user
/// detaches with `key` twice or the supervisor lets go.
pub fn attach(socket: &Path, key: u8) -> io::Result<Left> {
    let mut stream = UnixStream::connect(socket)?;
    let (stdin, stdout) = (user(0), user(1));
    let (winch_rx, winch_tx) = pipe()?;
    let winch = signal_hook::low_level::pipe::register(SIGWINCH, winch_tx)?;
    let raw = RawMode::enter(stdin)?;
    let left = relay(&mut stream, stdin, stdout, winch_rx.as_fd(), key);
    drop(raw);
    signal_hook::low_level::unregister(winch);
    left
}

fn relay(
    stream: &mut UnixStream,
    stdin: BorrowedFd<'_>,
    stdout: BorrowedFd<'_>,
    winch: BorrowedFd<'_>,
    key: u8,
) -> io::Result<Left> {
    let mut out = std::fs::File::from(stdout.try_clone_to_owned()?);
    send_size(stream, stdin)?;
    let mut buf = vec![0u8; 16 << 10];
    let mut pending = false;
    loop {
        let mut fds = [
            PollFd::new(stream.as_fd(), PollFlags::POLLIN),
            PollFd::new(stdin, PollFlags::POLLIN),
            PollFd::new(winch, PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|fd| fd.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        if ready[0] {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return Ok(Left::Released),
                Ok(n) => {
                    out.write_all(&buf[..n])?;
                    out.flush()?;
                }
            }
        }
        if ready[1] {
            let n = read(stdin, &mut buf)?;
            if n == 0 {
                return Ok(Left::Detached);
            }
            let (typed, detach) = keys(&buf[..n], key, &mut pending);
            if !typed.is_empty() {
                stream.write_all(&Frame::Input(typed).encode())?;
            }
            if detach {
                return Ok(Left::Detached);
            }
        }
        if ready[2] {
            let _ = read(winch, &mut buf);
            send_size(stream, stdin)?;
        }
    }
}

/// What of `bytes` goes to the job, and whether the detach key came twice in a row; `pending`
/// carries a detach key pressed last, once, from one read to the next.
fn keys(bytes: &[u8], key: u8, pending: &mut bool) -> (Vec<u8>, bool) {
    let mut typed = Vec::with_capacity(bytes.len() + 1);
    for &b in bytes {
        if *pending {
            *pending = false;
            if b == key {
                return (typed, true);
            }
            typed.push(key);
        }
        if b == key {
            *pending = true;
        } else {
            typed.push(b);
        }
    }
    (typed, false)
}

fn send_size(stream: &mut UnixStream, terminal: BorrowedFd<'_>) -> io::Result<()> {
    if let Some((rows, cols)) = winsize_of(terminal) {
        stream.write_all(&Frame::Resize { rows, cols }.encode())?;
    }
    Ok(())
}

fn user(fd: i32) -> BorrowedFd<'static> {
    // SAFETY: descriptors 0 and 1 stay open for the whole life of the process.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

#[cfg(test)]
mod tests {
    use super::keys;

    #[test]
    fn the_detach_key_twice_detaches_once_it_goes_through() {
        let mut pending = false;
        assert_eq!(
            keys(b"ab\x1c\x1c", 0x1c, &mut pending),
            (b"ab".to_vec(), true)
        );
        let mut pending = false;
        assert_eq!(
            keys(b"a\x1cb", 0x1c, &mut pending),
            (b"a\x1cb".to_vec(), false)
        );
        let mut pending = false;
        assert_eq!(keys(b"x\x1c", 0x1c, &mut pending), (b"x".to_vec(), false));
        assert!(pending);
        assert_eq!(keys(b"\x1c", 0x1c, &mut pending), (Vec::new(), true));
    }
}
