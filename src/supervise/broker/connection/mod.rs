//! Making a connection the broker allowed, on the job's own socket, with the job's semantics: a
//! non-blocking socket gets the kernel's immediate answer (EINPROGRESS); a blocking one waits as
//! long as the job's own send timeout says (unbounded by default), but never on the broker's
//! thread, where it would hold up every other call of the job.
//!
//! The broker first tries with the socket's send timeout (which bounds a connect's wait) lowered to
//! a millisecond: a unix listener with room in its backlog and a loopback handshake finish within
//! it, so the common connect costs no thread. One that does not finish goes to a worker: a unix
//! connect that timed out left the socket unconnected and is simply made again; a TCP connect that
//! timed out goes on in the background, and the worker waits for it to complete.

mod attempt;
mod sockopt;

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex};

use crate::sandbox::notify::{Answer, Call, Listener};
use attempt::{attempt, connect, finish, Attempt};

pub use sockopt::option;

/// Blocking connects waited for at once on worker threads; one more waits for a free worker.
const WORKERS: usize = 64;

/// The threads that wait for connects, a bounded number at once.
#[derive(Clone, Default)]
pub struct Workers {
    busy: Arc<(Mutex<usize>, Condvar)>,
}

impl Workers {
    /// Makes an allowed connection of `socket` (a unix one, or an inet or netlink one) to `addr` and
    /// answers `call`. `keep` (the socket file `addr` names through `/proc/self/fd`) stays open until
    /// the connect is made.
    pub fn connect(
        &self,
        listener: &Arc<Listener>,
        call: Call,
        socket: OwnedFd,
        unix: bool,
        addr: Vec<u8>,
        keep: Option<Arc<OwnedFd>>,
    ) {
        // SAFETY: F_GETFL only reads the descriptor's flags (shared with the job's descriptor).
        let flags = unsafe { libc::fcntl(socket.as_raw_fd(), libc::F_GETFL) };
        if flags >= 0 && flags & libc::O_NONBLOCK != 0 {
            listener.answer(&call, connect(&socket, &addr));
            return;
        }
        if let Attempt::Done(answer) = attempt(&socket, &addr, unix) {
            listener.answer(&call, answer);
            return;
        }
        let (lock, free) = &*self.busy;
        let mut busy = lock.lock().unwrap_or_else(|e| e.into_inner());
        while *busy >= WORKERS {
            busy = free.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy += 1;
        drop(busy);
        let worker = Arc::clone(listener);
        let pool = Arc::clone(&self.busy);
        let spawned = std::thread::Builder::new()
            .name("isolate-connect".into())
            .spawn(move || {
                crate::supervise::broker::quiet();
                worker.answer(&call, finish(&socket, &addr, unix));
                drop(keep);
                let (lock, free) = &*pool;
                *lock.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
                free.notify_one();
            });
        if spawned.is_err() {
            // No thread to spare: the call fails as a connect does when resources run out.
            *lock.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            listener.answer(&call, Answer::Errno(libc::EAGAIN));
        }
    }
}
