//! The broker: the job's supervisor answering the calls the seccomp filter hands over (every
//! `connect`, `listen` where TCP bind is restricted, and `ioctl(TIOCGPTPEER)`: pty.rs), on a thread of its own so that a job that
//! floods it slows only itself while the supervisor goes on relaying output and honouring `stop`.
//!
//! For each call it reads the caller's arguments once, takes the caller's socket itself
//! (`pidfd_getfd`), decides on that socket and that address (unix.rs, inet.rs), and makes the
//! connection (or the listen) itself: the job's call returns the broker's result, and nothing the
//! job changes after the check reaches what was connected. The broker thread holds no capability
//! (it drops its effective set), so what it does for the job it does with the job's own rights.
//! A blocking TCP connect may take minutes: it is made on a worker thread, a bounded number at once.
//!
//! When the job's last process ends the filter's listener hangs up and the thread ends. When the
//! supervisor dies, the kernel fails the job's pending and later calls (`ENOSYS`).

mod caller;
mod connection;
mod inet;
mod listeners;
mod pty;
mod unix;

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::unistd::Pid;

use crate::job::record::Refused;
use crate::sandbox::notify::{Answer, Call, Listener};
use crate::sandbox::plan::Sockets;
use crate::sandbox::{handover, seccomp};

use caller::Callers;
use connection::Workers;

/// The largest address a connect takes (`sizeof(struct sockaddr_storage)`).
const ADDRESS_MAX: u64 = 128;

/// What becomes of one call.
pub enum Verdict {
    /// Its result is known (the broker made the connection, or the kernel refused it).
    Done(Answer),
    /// The policy refuses it: EACCES, and counted.
    Refused,
    /// Allowed: the broker connects the socket to the address the job gave (which may block).
    Connect,
    /// Allowed: the broker connects the socket to this socket file, the one it checked.
    ConnectTo(Arc<OwnedFd>),
    /// The call returns this descriptor, copied into the caller (close-on-exec there if `true`).
    Send(OwnedFd, bool),
}

/// A running broker; its thread lives until the job's last process is gone.
pub struct Broker {
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    unix_connect: AtomicU64,
    tcp_connect: AtomicU64,
    listen: AtomicU64,
}

/// A broker's thread, started before the job's helper is: it builds the seccomp filter and sends it
/// to the helper while the helper starts (so that neither the filter nor the thread is on the job's
/// way to its first instruction), then waits for the helper's listener.
pub struct Pending {
    listener: std::sync::mpsc::SyncSender<(OwnedFd, Option<std::path::PathBuf>)>,
    counts: Arc<Counts>,
    /// Why the filter could not be built (the helper then fails, saying it got none).
    failed: Arc<Mutex<Option<String>>>,
}

impl Pending {
    /// The thread that will answer for the job whose processes are the descendants of `root`;
    /// `status` is the supervisor's end of the helper's status socket.
    pub fn prepare(sockets: Sockets, root: Pid, status: OwnedFd) -> std::io::Result<Pending> {
        let counts = Arc::new(Counts::default());
        let failed = Arc::new(Mutex::new(None));
        let (serving, why) = (Arc::clone(&counts), Arc::clone(&failed));
        let (listener, arrives) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("isolate-broker".into())
            .spawn(move || {
                quiet();
                let bpf = seccomp::program(&sockets);
                // An empty filter makes the helper fail, saying so; the reason is kept here.
                let _ = handover::send_filter(&status, bpf.as_deref().unwrap_or_default());
                drop(status);
                if let Err(e) = bpf {
                    *why.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
                    return;
                }
                // Dropped without a listener (the job did not start): nothing to serve.
                if let Ok((fd, cgroup)) = arrives.recv() {
                    let members = listeners::Members { root, cgroup };
                    serve(Arc::new(Listener::new(fd)), sockets, members, serving);
                }
            })?;
        Ok(Pending {
            listener,
            counts,
            failed,
        })
    }

    /// Why the filter could not be built, once the helper has ended.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Starts answering on `listener`, for a job whose processes are in `cgroup` when it has one
    /// of its own.
    pub fn start(self, listener: OwnedFd, cgroup: Option<std::path::PathBuf>) -> Broker {
        let _ = self.listener.send((listener, cgroup));
        Broker {
            counts: self.counts,
        }
    }
}

impl Broker {
    /// What the broker refused so far.
    pub fn refused(&self) -> Refused {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Refused {
            unix_connect: get(&self.counts.unix_connect),
            tcp_connect: get(&self.counts.tcp_connect),
            listen: get(&self.counts.listen),
            network: None,
        }
    }
}

/// What a refusal is counted as.
#[derive(Clone, Copy)]
enum Kind {
    Unix,
    Tcp,
    Listen,
}

/// One call, decided: the verdict, the caller's socket, and the address it gave.
struct Decided {
    verdict: Verdict,
    kind: Kind,
    socket: Option<OwnedFd>,
    addr: Vec<u8>,
}

/// What `decide` came to.
enum Decision {
    Decided(Decided),
    /// The call needs no answer: its thread is gone.
    Gone,
    /// The kept pidfd of the caller's id was a dead thread's.
    Stale,
}

impl Decided {
    fn failed(errno: i32) -> Decision {
        Decision::Decided(Decided {
            verdict: Verdict::Done(Answer::Errno(errno)),
            kind: Kind::Tcp,
            socket: None,
            addr: Vec::new(),
        })
    }
}

/// The broker thread's loop (signals stay with the supervisor's main thread, capabilities are
/// dropped: `quiet`).
fn serve(
    listener: Arc<Listener>,
    sockets: Sockets,
    members: listeners::Members,
    counts: Arc<Counts>,
) {
    let mut unix = unix::Unix::new(
        sockets.unix_allowed.clone(),
        sockets.abstract_scoped,
        members,
    );
    let workers = Workers::default();
    let mut callers = Callers::default();
    loop {
        let mut fds = [PollFd::new(listener.fd().as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return,
        }
        let events = fds[0].revents().unwrap_or(PollFlags::empty());
        if !events.contains(PollFlags::POLLIN) && !events.is_empty() {
            // No process of the job is left under the filter.
            return;
        }
        let call = match listener.receive() {
            Ok(Some(call)) => call,
            Ok(None) => continue,
            Err(_) => return,
        };
        let decided = match decide(&listener, &call, &sockets, &mut unix, &mut callers) {
            Decision::Decided(decided) => decided,
            // A kept pidfd whose thread had died: the caller reused its id; once more, afresh.
            Decision::Stale => {
                callers.forget(call.tid);
                match decide(&listener, &call, &sockets, &mut unix, &mut callers) {
                    Decision::Decided(decided) => decided,
                    Decision::Stale | Decision::Gone => continue,
                }
            }
            Decision::Gone => continue,
        };
        match (decided.verdict, decided.socket) {
            (Verdict::Done(answer), _) => listener.answer(&call, answer),
            (Verdict::Send(fd, cloexec), _) => listener.answer_with_fd(&call, &fd, cloexec),
            (Verdict::Refused, _) => {
                let count = match decided.kind {
                    Kind::Unix => &counts.unix_connect,
                    Kind::Tcp => &counts.tcp_connect,
                    Kind::Listen => &counts.listen,
                };
                count.fetch_add(1, Ordering::Relaxed);
                listener.answer(&call, Answer::Errno(libc::EACCES));
            }
            (Verdict::Connect, Some(socket)) => {
                let unix = matches!(decided.kind, Kind::Unix);
                workers.connect(&listener, call, socket, unix, decided.addr, None)
            }
            (Verdict::ConnectTo(file), Some(socket)) => {
                let addr = unix::address_of(&file);
                workers.connect(&listener, call, socket, true, addr, Some(file))
            }
            (Verdict::Connect | Verdict::ConnectTo(_), None) => {
                listener.answer(&call, Answer::Errno(libc::EBADF))
            }
        }
    }
}

/// A broker thread leaves signals to the supervisor's main thread and keeps no capability in
/// effect: capabilities are per thread, so a connect it makes for the job passes the same permission
/// checks (socket file modes, netlink ports) as the job's own would.
pub(super) fn quiet() {
    let _ = nix::sys::signal::SigSet::all().thread_block();
    let _ = caps::clear(None, caps::CapSet::Effective);
}

/// The verdict on `call`, with the caller's socket and address.
fn decide(
    listener: &Listener,
    call: &Call,
    sockets: &Sockets,
    unix: &mut unix::Unix,
    callers: &mut Callers,
) -> Decision {
    let caller = match callers.open(listener, call) {
        Ok(caller) => caller,
        Err(libc::ENOENT) => return Decision::Gone,
        Err(e) => return Decided::failed(e),
    };
    let take = |fd: u64| match caller.take(fd) {
        Err(libc::ESRCH) if caller.kept() => Err(Decision::Stale),
        Err(e) => Err(Decided::failed(e)),
        Ok(socket) => Ok(socket),
    };
    match call.nr {
        libc::SYS_connect => {
            // The kernel takes at most a sockaddr_storage (its socklen_t is 32 bits).
            let len = call.args[2] & 0xffff_ffff;
            if len > ADDRESS_MAX {
                return Decided::failed(libc::EINVAL);
            }
            let addr = match caller.read(call.args[1], len as usize) {
                Ok(addr) => addr,
                Err(e) => return Decided::failed(e),
            };
            // Had the caller died since it was opened, its pid (and so what was read) could be
            // another process's: the socket is taken through the caller's pidfd, which then fails,
            // and nothing is connected.
            let socket = match take(call.args[0]) {
                Ok(socket) => socket,
                Err(decision) => return decision,
            };
            let (verdict, kind) = match connection::option(&socket, libc::SO_DOMAIN) {
                Err(e) => (Verdict::Done(Answer::Errno(e)), Kind::Tcp),
                Ok(libc::AF_UNIX) => (unix.connect(&caller, &addr), Kind::Unix),
                Ok(libc::AF_INET) | Ok(libc::AF_INET6) => {
                    (inet::connect(sockets, &socket, &addr), Kind::Tcp)
                }
                Ok(libc::AF_NETLINK) => (inet::connect_netlink(&addr), Kind::Tcp),
                Ok(_) => (Verdict::Connect, Kind::Tcp),
            };
            Decision::Decided(Decided {
                verdict,
                kind,
                socket: Some(socket),
                addr,
            })
        }
        libc::SYS_listen => {
            let socket = match take(call.args[0]) {
                Ok(socket) => socket,
                Err(decision) => return decision,
            };
            Decision::Decided(Decided {
                verdict: inet::listen(sockets, &socket, call.args[1]),
                kind: Kind::Listen,
                socket: Some(socket),
                addr: Vec::new(),
            })
        }
        libc::SYS_ioctl => {
            let master = match take(call.args[0]) {
                Ok(master) => master,
                Err(decision) => return decision,
            };
            Decision::Decided(Decided {
                verdict: match pty::peer(&master, call.args[2]) {
                    Ok((slave, cloexec)) => Verdict::Send(slave, cloexec),
                    Err(errno) => Verdict::Done(Answer::Errno(errno)),
                },
                kind: Kind::Tcp,
                socket: None,
                addr: Vec::new(),
            })
        }
        _ => Decided::failed(libc::ENOSYS),
    }
}
