//! Interactive mode: the job on a terminal of its own (pty/), relayed to the user's. This is the
//! glue the supervisor's loop calls: the user's terminal goes raw once the job runs and is restored
//! exactly on every way out (normal end, signal, timeout, error: `Drop`), window sizes follow the
//! user's terminal, and Ctrl-Z stops the job, then isolate itself, until `fg`.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::supervise::pty::{
    settle_answers, Left, Pty, RawMode, Relay, RelayEnd, ALTERNATE_OFF, MARGINS_OFF, UNFOLLOWED_OFF,
};

/// How long the relay may take to pass on the job's last output once its tree is gone.
const DRAIN: Duration = Duration::from_secs(5);

/// What the supervisor's loop calls back into while the job runs.
pub trait Terminal {
    /// The user's terminal changed size (SIGWINCH).
    fn resized(&mut self);
    /// The job's main process stopped (Ctrl-Z): give the user back their terminal, stop isolate,
    /// and, once continued (`fg`), take the terminal again.
    fn suspend(&mut self);
    /// The job's terminal's foreground process group, to continue after `fg`.
    fn foreground(&self) -> Option<Pid>;
}

pub struct Interactive {
    pty: Pty,
    raw: Option<RawMode<'static>>,
    relay: Option<Relay>,
}

/// The user's terminal: isolate's standard input.
fn user_terminal() -> BorrowedFd<'static> {
    // SAFETY: descriptor 0 stays open for the whole life of the process.
    unsafe { BorrowedFd::borrow_raw(0) }
}

/// What the job's output may have left on in the user's terminal, switched off once it ends:
/// colours, mouse reports (each protocol and encoding), bracketed paste, application cursor keys
/// and keypad; the cursor back on; and what nothing follows (`UNFOLLOWED_OFF`). Each is harmless
/// when it was off (a shell that wants bracketed paste or application keys asks again at its
/// prompt).
const MODES_OFF: &[u8] =
    b"\x1b[0m\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?2004l\
\x1b[?1l\x1b>\x1b[?25h";

/// `MODES_OFF` to the user's terminal, when standard output is one, and what is reset only where
/// the job's output changed it (`left`).
fn modes_off(left: Left) {
    // SAFETY: isatty only queries the descriptor.
    if unsafe { libc::isatty(1) } == 1 {
        if left.alternate_screen {
            let _ = nix::unistd::write(user_output(), ALTERNATE_OFF);
        }
        if left.margins {
            let _ = nix::unistd::write(user_output(), MARGINS_OFF);
        }
        let _ = nix::unistd::write(user_output(), MODES_OFF);
        let _ = nix::unistd::write(user_output(), UNFOLLOWED_OFF);
    }
}

/// Standard output, where the job's terminal output goes.
fn user_output() -> BorrowedFd<'static> {
    // SAFETY: descriptor 1 stays open for the whole life of the process.
    unsafe { BorrowedFd::borrow_raw(1) }
}

/// Interactive mode applies in the foreground when standard input is a terminal.
pub fn wanted() -> bool {
    // SAFETY: isatty only queries the descriptor.
    unsafe { libc::isatty(0) == 1 }
}

impl Interactive {
    /// A new pty with the user's terminal settings and window size.
    pub fn open() -> io::Result<Interactive> {
        let pty = Pty::open()?;
        pty.copy_termios(user_terminal())?;
        pty.copy_winsize(user_terminal())?;
        Ok(Interactive {
            pty,
            raw: None,
            relay: None,
        })
    }

    /// The job's terminal, for the child to attach between fork and exec.
    pub fn slave_fd(&self) -> i32 {
        self.pty.slave.as_raw_fd()
    }

    /// The job's terminal device (`/dev/pts/N`), which its sandbox may write.
    pub fn slave_path(&self) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/self/fd/{}", self.slave_fd())).ok()
    }

    /// Once the job runs: close isolate's copy of the slave, put the user's terminal in raw mode,
    /// start relaying.
    pub fn start(&mut self) -> io::Result<()> {
        // Only the job may hold the slave now, so that its end reaches the master.
        let placeholder = std::fs::File::open("/dev/null")?;
        drop(std::mem::replace(&mut self.pty.slave, placeholder.into()));
        self.raw = Some(RawMode::enter(user_terminal())?);
        self.relay = Some(Relay::start(
            self.pty.master.as_fd(),
            user_terminal(),
            user_output(),
        )?);
        Ok(())
    }

    /// After the job's tree is gone: pass on its last output, restore the user's terminal.
    pub fn finish(&mut self) {
        if let Some(relay) = self.relay.take() {
            // A terminal that went away (OutputFailed) is how a hang-up ends; anything else is news.
            let finished = relay.finish(DRAIN);
            let hung_up = matches!(finished.end, RelayEnd::OutputFailed(_));
            if let RelayEnd::MasterFailed(e) = finished.end {
                say!("isolate: warning: the job's terminal failed: {e}");
            }
            modes_off(finished.left);
            // What the terminal still owes the job's questions, where it asked any and the answers
            // come to this terminal.
            // SAFETY: isatty only queries the descriptor.
            let to_a_terminal = unsafe { libc::isatty(1) } == 1;
            if finished.left.asked && self.raw.is_some() && !hung_up && to_a_terminal {
                let _ = settle_answers(user_terminal(), user_output());
            }
        }
        self.raw = None;
    }
}

impl Terminal for Interactive {
    fn resized(&mut self) {
        let _ = self.pty.copy_winsize(user_terminal());
    }

    fn suspend(&mut self) {
        if let Some(raw) = self.raw.as_mut() {
            let _ = raw.suspend();
        }
        // Stop as the shell expects; execution continues here on `fg` (SIGCONT).
        let _ = kill(Pid::this(), Signal::SIGSTOP);
        if let Some(raw) = self.raw.as_mut() {
            let _ = raw.resume();
        }
        self.resized();
    }

    fn foreground(&self) -> Option<Pid> {
        // SAFETY: tcgetpgrp only queries the terminal.
        let pgrp = unsafe { libc::tcgetpgrp(self.pty.master.as_raw_fd()) };
        (pgrp > 0).then(|| Pid::from_raw(pgrp))
    }
}

impl Drop for Interactive {
    fn drop(&mut self) {
        self.finish();
    }
}
