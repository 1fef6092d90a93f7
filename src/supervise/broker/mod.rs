//! The broker: the job's supervisor answering the calls the seccomp filter hands over (every
//! `connect`, `listen` where TCP bind is restricted, `setsockopt(SO_REUSEADDR)` and
//! `ioctl(TIOCGPTPEER)`: pty.rs), on a thread of its own so that a job that floods it slows only
//! itself while the supervisor goes on relaying output and honouring `stop`.
//!
//! For each call it reads the caller's arguments once, takes the caller's socket itself
//! (`pidfd_getfd`), decides on that socket and that address or value (unix/, inet/), and makes the
//! connection (or the listen, or sets the option) itself: the job's call returns the broker's
//! result, and nothing the job changes after the check reaches what was connected. The broker
//! thread holds no capability (it drops its effective set), so what it does for the job it does
//! with the job's own rights. A blocking TCP connect may take minutes: it is made on a worker
//! thread, a bounded number at once.
//!
//! When the job's last process ends the filter's listener hangs up and the thread ends. When the
//! supervisor dies, the kernel fails the job's pending and later calls (`ENOSYS`).

mod bind;
mod caller;
mod connection;
mod decide;
mod decided;
mod inet;
mod listeners;
mod pending;
mod process;
mod pty;
mod serve;
mod unix;

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::job::record::Refused;
use crate::sandbox::notify::Answer;

pub use listeners::{others_listen, Members};
pub use pending::Pending;

/// What becomes of one call.
pub enum Verdict {
    /// Its result is known (the broker made the connection, or the kernel refused it).
    Done(Answer),
    /// The policy refuses it: EACCES, and counted.
    Refused,
    /// Refused with this errno, and counted: `EADDRINUSE` for a listen that would take a port
    /// someone else's localhost service holds on the other family (a server then tries another).
    RefusedAs(i32),
    /// Allowed: the broker connects the socket to the address the job gave (which may block).
    Connect,
    /// Allowed under an allowlist: a connect to this port of the job's block, where only the job
    /// listened when it was checked. Checked again once made (connection/mod.rs): a listener of
    /// someone else's that came up meanwhile has the connection shut, `ECONNREFUSED`.
    ConnectOwn(u16),
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
    ipc: AtomicU64,
    process: AtomicU64,
    /// The first destinations refused (`Refused::first`).
    first: std::sync::Mutex<Vec<String>>,
}

/// How many refused destinations the record names.
const FIRST_REFUSED: usize = 5;

impl Counts {
    /// Notes `addr`, the address a refused connect named, among the first refused.
    fn note(&self, addr: &[u8]) {
        let Some(shown) = shown(addr) else { return };
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.len() < FIRST_REFUSED && !first.contains(&shown) {
            first.push(shown);
        }
    }
}

/// A socket address as the end of a job names it: a unix socket's path (`@name` for an abstract
/// one), an inet `address:port`.
fn shown(addr: &[u8]) -> Option<String> {
    let family = u16::from_ne_bytes([*addr.first()?, *addr.get(1)?]);
    if family == libc::AF_UNIX as u16 {
        let path = addr.get(2..)?;
        return Some(match path.split_first() {
            Some((0, name)) => format!("@{}", String::from_utf8_lossy(name).trim_end_matches('\0')),
            _ => {
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                String::from_utf8_lossy(&path[..end]).into_owned()
            }
        });
    }
    let ip = inet::ip(addr)?;
    let port = inet::port(addr)?;
    Some(std::net::SocketAddr::new(ip, port).to_string())
}

impl Broker {
    /// What the broker refused so far.
    pub fn refused(&self) -> Refused {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Refused {
            unix_connect: get(&self.counts.unix_connect),
            tcp_connect: get(&self.counts.tcp_connect),
            listen: get(&self.counts.listen),
            ipc: get(&self.counts.ipc),
            process: get(&self.counts.process),
            first: self
                .counts
                .first
                .lock()
                .map(|f| f.clone())
                .unwrap_or_default(),
            network: None,
        }
    }
}

/// The errno of the system call that just failed.
fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// A broker thread leaves signals to the supervisor's main thread and keeps no capability in
/// effect: capabilities are per thread, so a connect it makes for the job passes the same permission
/// checks (socket file modes, netlink ports) as the job's own would.
pub(super) fn quiet() {
    let _ = nix::sys::signal::SigSet::all().thread_block();
    let _ = caps::clear(None, caps::CapSet::Effective);
}
