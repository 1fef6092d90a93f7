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

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::sandbox::notify::{Answer, Call, Listener};

/// Blocking connects waited for at once on worker threads; one more waits for a free worker.
const WORKERS: usize = 64;
/// How long the broker's own attempt may wait.
const ATTEMPT: Duration = Duration::from_millis(1);

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `getsockopt(socket, SOL_SOCKET, option)` as an int.
pub fn option(socket: &OwnedFd, option: libc::c_int) -> Result<libc::c_int, i32> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(errno())
    }
}

/// `connect(socket, addr)`, its result as the job's call returns it.
pub fn connect(socket: &OwnedFd, addr: &[u8]) -> Answer {
    // SAFETY: `addr` is valid for its length; connect only reads it.
    let rc = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            addr.as_ptr().cast(),
            addr.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Answer::Value(0)
    } else {
        Answer::Errno(errno())
    }
}

fn send_timeout(socket: &OwnedFd) -> Option<libc::timeval> {
    let mut value = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut len = std::mem::size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `value`.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&mut value as *mut libc::timeval).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(value)
}

fn set_send_timeout(socket: &OwnedFd, value: &libc::timeval) -> bool {
    // SAFETY: setsockopt reads one timeval of ours.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (value as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    rc == 0
}

/// Where the connection stands after the broker's own attempt.
enum Attempt {
    Done(Answer),
    /// It must wait: a worker finishes it.
    Waits,
}

/// The broker's attempt, bounded by `ATTEMPT` (the job's timeout restored after it: another thread
/// of the job changing it in these microseconds, on a socket not yet connected, is not heeded).
fn attempt(socket: &OwnedFd, addr: &[u8], unix: bool) -> Attempt {
    let Some(before) = send_timeout(socket) else {
        return Attempt::Waits;
    };
    let short = libc::timeval {
        tv_sec: 0,
        tv_usec: ATTEMPT.as_micros() as libc::suseconds_t,
    };
    if !set_send_timeout(socket, &short) {
        return Attempt::Waits;
    }
    let answer = connect(socket, addr);
    set_send_timeout(socket, &before);
    match answer {
        Answer::Errno(libc::EAGAIN) if unix => Attempt::Waits,
        Answer::Errno(libc::EINPROGRESS) if !unix => Attempt::Waits,
        answer => Attempt::Done(answer),
    }
}

/// A worker's end of a connect that must wait, bounded by the job's own send timeout.
fn finish(socket: &OwnedFd, addr: &[u8], unix: bool) -> Answer {
    if unix {
        return connect(socket, addr);
    }
    let limit = send_timeout(socket)
        .map(|t| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64))
        .filter(|t| !t.is_zero());
    let timeout = match limit {
        Some(t) => PollTimeout::try_from(t).unwrap_or(PollTimeout::MAX),
        None => PollTimeout::NONE,
    };
    loop {
        let mut fds = [PollFd::new(
            std::os::fd::AsFd::as_fd(socket),
            PollFlags::POLLOUT,
        )];
        match poll(&mut fds, timeout) {
            Ok(0) => return Answer::Errno(libc::EINPROGRESS),
            Ok(_) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Answer::Errno(e as i32),
        }
    }
    match option(socket, libc::SO_ERROR) {
        Ok(0) => Answer::Value(0),
        Ok(e) | Err(e) => Answer::Errno(e),
    }
}

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
                super::quiet();
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
