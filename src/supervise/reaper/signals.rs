//! The signals the supervisor reacts to (CHLD, TERM, INT, HUP, QUIT, WINCH): a flag per signal and
//! a self-pipe that wakes the supervisor's loop. The handlers only set flags and write a byte;
//! everything a signal means is done by the loop, never in a handler.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};

use crate::error::{Error, Result};

/// Signals the supervisor reacts to: a flag per signal, and a self-pipe that wakes the loop.
pub struct Signals {
    read: UnixStream,
    flags: Vec<(i32, Arc<AtomicBool>)>,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    /// Installs the handlers. Call before spawning the job, so no signal is lost in between.
    pub fn install() -> Result<Signals> {
        let fail = |e| Error::System("cannot install signal handlers", e);
        let (read, write) = UnixStream::pair().map_err(fail)?;
        read.set_nonblocking(true).map_err(fail)?;
        write.set_nonblocking(true).map_err(fail)?;
        let mut signals = Signals {
            read,
            flags: Vec::new(),
            ids: Vec::new(),
        };
        for sig in [SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGWINCH] {
            let flag = Arc::new(AtomicBool::new(false));
            // The flag first, so that it is set by the time the pipe wakes the loop.
            signals
                .ids
                .push(signal_hook::flag::register(sig, Arc::clone(&flag)).map_err(fail)?);
            let waker = write.try_clone().map_err(fail)?;
            signals
                .ids
                .push(signal_hook::low_level::pipe::register(sig, waker).map_err(fail)?);
            signals.flags.push((sig, flag));
        }
        Ok(signals)
    }

    /// The signals received since the last call, emptying the pipe.
    fn drain(&mut self) -> Vec<i32> {
        let mut buf = [0u8; 64];
        while let Ok(1..) = self.read.read(&mut buf) {}
        self.flags
            .iter()
            .filter(|(_, flag)| flag.swap(false, Ordering::SeqCst))
            .map(|(sig, _)| *sig)
            .collect()
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

impl Signals {
    /// Sleeps until a signal arrives or `limit` passes (at least a millisecond); the signals
    /// received, emptying the pipe.
    pub(super) fn wait(&mut self, limit: Duration) -> Vec<i32> {
        let mut fds = [PollFd::new(self.read.as_fd(), PollFlags::POLLIN)];
        let ms = limit.as_millis().clamp(1, i32::MAX as u128) as i32;
        let _ = poll(
            &mut fds,
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
        );
        self.drain()
    }
}

impl Signals {
    /// The first stop signal (TERM, INT, HUP, QUIT) received so far, if any; used before the job
    /// starts, when there is nothing to forward it to.
    pub fn stop_requested(&mut self) -> Option<i32> {
        self.drain().into_iter().find(|s| STOPS.contains(s))
    }

    /// Sleeps until a signal arrives or `limit` passes; the first stop signal received so far, if
    /// any (a queued job's waiter between two looks at the queue).
    pub fn stop_within(&mut self, limit: Duration) -> Option<i32> {
        self.wait(limit).into_iter().find(|s| STOPS.contains(s))
    }
}

/// The signals that ask the supervisor to stop the job.
const STOPS: [i32; 4] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT];
