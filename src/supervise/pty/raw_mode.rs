//! The user's terminal in raw mode ([`RawMode`]), restored exactly on every way out. It must never
//! leave the user's terminal raw, nor throw away what the user typed ahead.

use std::io;
use std::os::fd::BorrowedFd;

use super::termios::{get_termios, set_termios};

/// The user's terminal in raw mode: every byte goes to the job as typed (Ctrl-C, Ctrl-Z and
/// Ctrl-S included; the job's own terminal interprets them), and output is not post-processed
/// (the job's terminal already did). Restores the exact original settings when dropped, and on
/// demand around the supervisor's own stop.
///
/// Settings are applied with `TCSADRAIN`, not `TCSAFLUSH` as many programs do: flushing would
/// throw away what the user typed ahead before the job started (entering), or keystrokes meant
/// for the shell (restoring). Draining lets output already written be transmitted under the
/// settings it was written for. Entering is meant for the foreground: in a background process
/// group the kernel stops the supervisor with SIGTTOU until it is foreground again.
pub struct RawMode<'fd> {
    fd: BorrowedFd<'fd>,
    original: libc::termios,
    raw: libc::termios,
    active: bool,
}

impl<'fd> RawMode<'fd> {
    /// Puts `fd` (the user's terminal) in raw mode, after recording its settings.
    pub fn enter(fd: BorrowedFd<'fd>) -> io::Result<RawMode<'fd>> {
        let original = get_termios(fd)?;
        let raw = make_raw(original);
        set_termios(fd, libc::TCSADRAIN, &raw)?;
        Ok(RawMode {
            fd,
            original,
            raw,
            active: true,
        })
    }

    /// Restores the original settings, before the supervisor stops itself (Ctrl-Z). Does
    /// nothing when already suspended.
    pub fn suspend(&mut self) -> io::Result<()> {
        if self.active {
            set_termios(self.fd, libc::TCSADRAIN, &self.original)?;
            self.active = false;
        }
        Ok(())
    }

    /// Raw again, after SIGCONT. Does nothing when already raw.
    pub fn resume(&mut self) -> io::Result<()> {
        if !self.active {
            set_termios(self.fd, libc::TCSADRAIN, &self.raw)?;
            self.active = true;
        }
        Ok(())
    }
}

impl Drop for RawMode<'_> {
    /// Restores the original settings unless suspended (then they already are, and the shell
    /// may have set others since that are not ours to undo).
    fn drop(&mut self) {
        let _ = self.suspend();
    }
}

/// `cfmakeraw(3)`, spelled out (the libc binding's return type differs between targets).
pub(super) fn make_raw(mut t: libc::termios) -> libc::termios {
    t.c_iflag &= !(libc::IGNBRK
        | libc::BRKINT
        | libc::PARMRK
        | libc::ISTRIP
        | libc::INLCR
        | libc::IGNCR
        | libc::ICRNL
        | libc::IXON);
    t.c_oflag &= !libc::OPOST;
    t.c_lflag &= !(libc::ECHO | libc::ECHONL | libc::ICANON | libc::ISIG | libc::IEXTEN);
    t.c_cflag &= !(libc::CSIZE | libc::PARENB);
    t.c_cflag |= libc::CS8;
    t.c_cc[libc::VMIN] = 1;
    t.c_cc[libc::VTIME] = 0;
    t
}
