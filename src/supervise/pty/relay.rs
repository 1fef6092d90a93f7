//! The relay between the user's terminal and the job's ([`Relay`]) and how it ended
//! ([`RelayEnd`]): two threads, one per direction, each waited for with a timeout. It must never
//! keep the supervisor alive, nor keep reading the user's keystrokes once it is finished.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::direction::{relay_input, relay_output};
use super::screen::Left;
use super::syscall::set_nonblocking;
use super::worker::Worker;
use crate::sys::pipe::pipe;

/// How long [`Relay::finish`] waits for a thread it has told to stop: one blocked in a plain
/// `read` or `write` on the user's terminal cannot notice, and is left behind (it owns its own
/// duplicates of every descriptor it uses, so nothing it touches is ever reused under it).
const STOP_GRACE: Duration = Duration::from_millis(200);

/// How the job's output direction of a [`Relay`] ended.
#[derive(Debug)]
pub enum RelayEnd {
    /// Every holder of the slave closed it, and everything written to it before reached the
    /// output.
    Drained,
    /// Writing to the output failed (the user's terminal hung up, say). The job's output was
    /// still read to the end, and discarded, so that the job never blocked on a dead terminal.
    OutputFailed(io::Error),
    /// Reading the master failed with something other than the end.
    MasterFailed(io::Error),
    /// The timeout of [`Relay::finish`] passed first: something still holds the slave, or the
    /// output does not take what is written. The relay was told to stop.
    TimedOut,
}

/// The relay between the user's terminal and the job's: two threads, one per direction, so a job
/// that does not read its input never holds up its output. Each uses its own duplicates of the
/// descriptors and one fixed buffer. The master is put in non-blocking mode (its file
/// description is the supervisor's alone); the user's descriptors keep their flags, and a
/// thread waits for them with `poll` on the descriptor and on a stop pipe, so that
/// [`Relay::finish`] (or dropping the relay) stops it. A thread never keeps the process alive:
/// the supervisor may exit while one is still blocked.
pub struct Relay {
    /// Closing this end (dropping it) wakes both threads and tells them to stop.
    stop: OwnedFd,
    input: Worker<()>,
    output: Worker<RelayEnd>,
    /// What the output relayed so far left changed of the user's terminal (`Left::bits`).
    left: Arc<AtomicU8>,
}

/// A relay finished: how its output ended, and what that left changed of the user's terminal
/// that is reset only where it was (screen.rs).
#[derive(Debug)]
pub struct Finished {
    pub end: RelayEnd,
    pub left: Left,
}

impl Relay {
    /// Starts relaying `input` (the user's terminal) to `master`, and `master` to `output`.
    pub fn start(
        master: BorrowedFd<'_>,
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
    ) -> io::Result<Relay> {
        set_nonblocking(master)?;
        let master = Arc::new(master.try_clone_to_owned()?);
        let input = input.try_clone_to_owned()?;
        let output = output.try_clone_to_owned()?;
        let (stop_rx, stop) = pipe()?;
        let stop_rx = Arc::new(stop_rx);

        let (m, s) = (Arc::clone(&master), Arc::clone(&stop_rx));
        let input = Worker::spawn("isolate-pty-in", move || {
            relay_input(input.as_fd(), m.as_fd(), s.as_fd())
        })?;
        let left = Arc::new(AtomicU8::new(0));
        let on = Arc::clone(&left);
        let output = Worker::spawn("isolate-pty-out", move || {
            relay_output(master.as_fd(), output.as_fd(), stop_rx.as_fd(), &on)
        })?;
        Ok(Relay {
            stop,
            input,
            output,
            left,
        })
    }

    /// Waits up to `timeout` for the job's output to be relayed to the end, then stops the
    /// relay: the user's keystrokes are no longer read after this returns. Call it once the
    /// job's tree is gone (and the supervisor's copy of the slave closed): then the end arrives
    /// at once, and the timeout only guards against an output that does not take the rest.
    pub fn finish(self, timeout: Duration) -> Finished {
        let end = self.output.wait(timeout);
        drop(self.stop);
        let _ = self.input.wait(STOP_GRACE);
        Finished {
            end: end.unwrap_or(RelayEnd::TimedOut),
            left: Left::from_bits(self.left.load(Ordering::Relaxed)),
        }
    }
}
