//! A headless job's output stream that would be the user's terminal, given to the job as a pipe
//! whose bytes a thread of the supervisor writes to that terminal, as `docker run` without `-t`
//! gives a container pipes. A terminal inherited as stdout or stderr was the job's to control
//! however its stdin came: it read what the user typed meanwhile, changed the terminal's modes for
//! good (`stty -echo`), took it exclusively (`TIOCEXCL`) and suspended its output (`TCOOFF`),
//! which hung isolate's own last message and the user's shell. A pipe passes on bytes only. With
//! `--no-pty` the user hands the job the terminal, and it is passed through as it is.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{OwnedFd, RawFd};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use crate::supervise::spawn::Stdio;
use crate::sys::pipe::pipe;

/// A headless job's stdout and stderr: each the supervisor's own, or a pipe where that is a
/// terminal, with the relays to start once the job is forked.
pub fn outputs() -> io::Result<(Stdio, Stdio, Vec<Relay>)> {
    let mut relays = Vec::new();
    let mut stream = |fd| -> io::Result<Stdio> {
        Ok(match Relay::of_terminal(fd)? {
            Some((write, relay)) => {
                relays.push(relay);
                Stdio::from(write)
            }
            None => Stdio::inherit(),
        })
    };
    let (stdout, stderr) = (stream(1)?, stream(2)?);
    Ok((stdout, stderr, relays))
}

/// How long the job's last output may take to reach the terminal once its tree is gone.
const DRAIN: Duration = Duration::from_secs(5);

/// One stream relayed: the pipe's read end and a copy of the user's terminal, until started.
pub struct Relay {
    ends: Option<(OwnedFd, File)>,
    done: Option<Receiver<()>>,
}

impl Relay {
    /// For the supervisor's stream `fd` (1 or 2): when it is a terminal, the pipe's end for the
    /// job and its relay; `None` when it is not one.
    pub fn of_terminal(fd: RawFd) -> io::Result<Option<(OwnedFd, Relay)>> {
        // SAFETY: isatty only queries the descriptor.
        if unsafe { libc::isatty(fd) } != 1 {
            return Ok(None);
        }
        let (read, write) = pipe()?;
        // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor, owned here.
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if copy < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `copy` was just made and is owned by nothing else.
        let terminal = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(copy) };
        let relay = Relay {
            ends: Some((read, terminal)),
            done: None,
        };
        Ok(Some((write, relay)))
    }

    /// Starts the thread that copies (after the fork: a thread before it would have the job enter
    /// its sandbox through the helper's exec).
    pub fn start(&mut self) -> io::Result<()> {
        let Some((read, terminal)) = self.ends.take() else {
            return Ok(());
        };
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("relay".into())
            .spawn(move || {
                copy(read, terminal);
                let _ = tx.send(());
            })?;
        self.done = Some(rx);
        Ok(())
    }

    /// Waits, at most `DRAIN`, until the job's last output has gone to the terminal (every end of
    /// the pipe the job had is closed once its tree is gone).
    pub fn finish(self) {
        if let Some(done) = self.done {
            let _ = done.recv_timeout(DRAIN);
        }
    }
}

/// The pipe's bytes to the terminal until the pipe's end; once the terminal refuses them (hung
/// up), the rest read and dropped, so that the job never blocks on a full pipe.
fn copy(read: OwnedFd, mut terminal: File) {
    let mut pipe = File::from(read);
    let mut buf = vec![0u8; 64 << 10];
    let mut open = true;
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => open = open && terminal.write_all(&buf[..n]).is_ok(),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
