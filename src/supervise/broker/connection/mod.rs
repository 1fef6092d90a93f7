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
use crate::supervise::broker::listeners::{others_listen, Members};
use attempt::{attempt, connect, finish, Attempt};

pub use sockopt::option;

/// Blocking connects waited for at once on worker threads; one more waits for a free worker.
const WORKERS: usize = 64;

/// What is kept or checked with a connect.
pub enum Made {
    /// Nothing: the connection is made as allowed.
    As,
    /// The socket file the address names through `/proc/self/fd`, open until the connect is made.
    Keeping { _file: Arc<OwnedFd> },
    /// A port of the job's block, where only the job listened when the connect was checked: once
    /// made, checked again (a listener of someone else's that came up between the check and the
    /// connect may have taken it), and shut if another listens there now.
    Checked(u16, Members),
}

impl Made {
    /// The answer the job gets for `made`, the connect's own answer on `socket`.
    fn settle(&self, socket: &OwnedFd, made: Answer) -> Answer {
        let Made::Checked(port, members) = self else {
            return made;
        };
        let connecting = matches!(made, Answer::Value(0) | Answer::Errno(libc::EINPROGRESS));
        if !connecting || others_listen(*port, members) == Some(false) {
            return made;
        }
        // SAFETY: shutdown of a socket the broker holds; the job's descriptor shares it.
        unsafe { libc::shutdown(socket.as_raw_fd(), libc::SHUT_RDWR) };
        Answer::Errno(libc::ECONNREFUSED)
    }
}

/// The threads that wait for connects, a bounded number at once.
#[derive(Clone, Default)]
pub struct Workers {
    busy: Arc<(Mutex<usize>, Condvar)>,
}

impl Workers {
    /// Makes an allowed connection of `socket` (a unix one, or an inet or netlink one) to `addr` and
    /// answers `call`, keeping or checking what `made` says.
    pub fn connect(
        &self,
        listener: &Arc<Listener>,
        call: Call,
        socket: OwnedFd,
        unix: bool,
        addr: Vec<u8>,
        made: Made,
    ) {
        // SAFETY: F_GETFL only reads the descriptor's flags (shared with the job's descriptor).
        let flags = unsafe { libc::fcntl(socket.as_raw_fd(), libc::F_GETFL) };
        if flags >= 0 && flags & libc::O_NONBLOCK != 0 {
            let answer = connect(&socket, &addr);
            listener.answer(&call, made.settle(&socket, answer));
            return;
        }
        if let Attempt::Done(answer) = attempt(&socket, &addr, unix) {
            listener.answer(&call, made.settle(&socket, answer));
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
                let answer = finish(&socket, &addr, unix);
                worker.answer(&call, made.settle(&socket, answer));
                drop(made);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{ErrorKind, Write};
    use std::net::{TcpListener, TcpStream};

    /// A connect to a port of the job's block is shut once made when a listener not the job's
    /// holds the port (one that came up between the check and the connect), and left alone when
    /// none does.
    #[test]
    fn a_connect_to_a_port_someone_else_listens_on_now_is_shut() {
        // A job of this process's children, none of which holds the test's sockets.
        let members = Members {
            root: nix::unistd::Pid::this(),
            cgroup: None,
        };
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let socket = OwnedFd::from(stream.try_clone().unwrap());
        let made = Made::Checked(port, members.clone());
        let answer = made.settle(&socket, Answer::Value(0));
        assert_eq!(answer, Answer::Errno(libc::ECONNREFUSED));
        let sent = stream.write_all(b"secret");
        assert_eq!(sent.unwrap_err().kind(), ErrorKind::BrokenPipe, "shut");
        let (mut accepted, _) = server.accept().unwrap();
        let mut got = Vec::new();
        std::io::Read::read_to_end(&mut accepted, &mut got).unwrap();
        assert!(got.is_empty(), "nothing reached the listener: {got:?}");
        drop(server);

        // Nobody listens there any more: the connect's own answer stands.
        let free = TcpListener::bind("127.0.0.1:0").unwrap();
        let other = TcpStream::connect(free.local_addr().unwrap()).unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let socket = OwnedFd::from(other);
        let made = Made::Checked(port, members);
        assert_eq!(made.settle(&socket, Answer::Value(0)), Answer::Value(0));
        let refused = Answer::Errno(libc::ECONNREFUSED);
        assert_eq!(Made::As.settle(&socket, Answer::Value(0)), Answer::Value(0));
        assert_eq!(made.settle(&socket, refused), refused, "a failed connect");
    }
}
