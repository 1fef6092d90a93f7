//! `isolate attach`'s side of the channel: the user's terminal raw (restored exactly on every way
//! out, as in interactive mode), keystrokes and window sizes sent as frames, the job's screen and
//! output written as they come. The detach key pressed twice leaves the job running; pressed once
//! and followed by anything else, both keys go to the job.

use std::io::{self, Read, Write};
use std::num::NonZeroU16;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGWINCH};
use signal_hook::SigId;

use super::wire::Frame;
use crate::supervise::pty::{
    read, settle_answers, winsize_of, Model, RawMode, ALTERNATE_OFF, MARGINS_OFF, UNFOLLOWED_OFF,
};
use crate::sys::pipe::pipe;

/// How an attach ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    /// The user pressed the detach key twice (or closed the input): the job runs on.
    Detached,
    /// The supervisor let go: the job's terminal ended, or another attach took over.
    Released,
    /// `attach` was sent this signal (SIGTERM, SIGHUP, SIGINT): the job runs on.
    Signalled(i32),
}

/// The signals that end an attach (the terminal given back first) rather than the process as it is.
const LEAVING: [i32; 3] = [SIGTERM, SIGHUP, SIGINT];

/// Attaches the user's terminal (descriptors 0 and 1) to the job behind `socket` until the user
/// detaches with `key` twice or the supervisor lets go.
pub fn attach(socket: &Path, key: u8) -> io::Result<Left> {
    let mut stream = UnixStream::connect(socket)?;
    let (stdin, stdout) = (user(0), user(1));
    let (winch_rx, winch_tx) = pipe()?;
    let mut ids = vec![signal_hook::low_level::pipe::register(SIGWINCH, winch_tx)?];
    let (quit_rx, quit_tx) = pipe()?;
    let caught = Arc::new(AtomicUsize::new(0));
    let left = match leaving(&mut ids, &quit_tx, &caught) {
        Ok(()) => {
            let raw = RawMode::enter(stdin)?;
            let mut out = std::fs::File::from(stdout.try_clone_to_owned()?);
            let mut modes = Model::new(NonZeroU16::MIN, NonZeroU16::MIN);
            let signals = Signals {
                winch: winch_rx.as_fd(),
                quit: quit_rx.as_fd(),
                caught: &caught,
            };
            let left = relay(&mut stream, stdin, &mut out, &signals, key, &mut modes);
            // The modes the job switched on (the alternate screen, mouse reporting, a hidden
            // cursor…) are switched off again before the user's shell has the terminal back.
            let _ = out.write_all(&restore(&modes));
            let _ = out.flush();
            // What the terminal still owes the job's last questions, dropped, not left to the
            // user's shell: where the job asked any, and the answers come to this terminal.
            // SAFETY: isatty only queries the descriptor.
            if modes.asked() && unsafe { libc::isatty(1) } == 1 {
                let _ = settle_answers(stdin, stdout);
            }
            drop(raw);
            left
        }
        Err(e) => Err(e),
    };
    for id in ids {
        signal_hook::low_level::unregister(id);
    }
    left
}

/// SIGTERM, SIGHUP and SIGINT noted in `caught` and woken on `quit`, so that each ends the attach
/// through the way out that gives the terminal back.
fn leaving(ids: &mut Vec<SigId>, quit: &OwnedFd, caught: &Arc<AtomicUsize>) -> io::Result<()> {
    for signal in LEAVING {
        ids.push(signal_hook::flag::register_usize(
            signal,
            Arc::clone(caught),
            signal as usize,
        )?);
        ids.push(signal_hook::low_level::pipe::register(
            signal,
            quit.try_clone()?,
        )?);
    }
    Ok(())
}

/// What wakes the relay besides the channel and the keyboard.
struct Signals<'a> {
    winch: BorrowedFd<'a>,
    quit: BorrowedFd<'a>,
    caught: &'a AtomicUsize,
}

/// The sequences that switch off what the job's output left on in the terminal.
fn restore(modes: &Model) -> Vec<u8> {
    let screen = modes.screen();
    let mut out = b"\x1b[0m".to_vec();
    if modes.alternate_screen() {
        out.extend_from_slice(ALTERNATE_OFF);
    }
    if modes.margins() {
        out.extend_from_slice(MARGINS_OFF);
    }
    if screen.mouse_protocol_mode() != vt100::MouseProtocolMode::None {
        out.extend_from_slice(b"\x1b[?1000l\x1b[?1002l\x1b[?1003l");
    }
    if screen.mouse_protocol_encoding() != vt100::MouseProtocolEncoding::Default {
        out.extend_from_slice(b"\x1b[?1005l\x1b[?1006l");
    }
    if screen.bracketed_paste() {
        out.extend_from_slice(b"\x1b[?2004l");
    }
    if screen.application_cursor() {
        out.extend_from_slice(b"\x1b[?1l");
    }
    if screen.application_keypad() {
        out.extend_from_slice(b"\x1b>");
    }
    if screen.hide_cursor() {
        out.extend_from_slice(b"\x1b[?25h");
    }
    out.extend_from_slice(UNFOLLOWED_OFF);
    out
}

fn relay(
    stream: &mut UnixStream,
    stdin: BorrowedFd<'_>,
    out: &mut std::fs::File,
    signals: &Signals<'_>,
    key: u8,
    modes: &mut Model,
) -> io::Result<Left> {
    send_size(stream, stdin)?;
    let mut buf = vec![0u8; 16 << 10];
    let mut pending = false;
    loop {
        let mut fds = [
            PollFd::new(stream.as_fd(), PollFlags::POLLIN),
            PollFd::new(stdin, PollFlags::POLLIN),
            PollFd::new(signals.winch, PollFlags::POLLIN),
            PollFd::new(signals.quit, PollFlags::POLLIN),
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
                    modes.process(&buf[..n]);
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
            let _ = read(signals.winch, &mut buf);
            send_size(stream, stdin)?;
        }
        if ready[3] {
            let signal = signals.caught.load(Ordering::SeqCst) as i32;
            return Ok(Left::Signalled(if signal > 0 { signal } else { SIGTERM }));
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
