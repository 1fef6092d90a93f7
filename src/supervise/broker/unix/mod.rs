//! A job's connect to a unix socket: allowed when the socket is the job's own (bound by a process of
//! the job) or named by the policy, refused (EACCES) when it is served from outside.
//!
//! A path is resolved once, as the job would resolve it (its thread's working directory; its
//! `/proc/self`), to a descriptor of the socket file; the decision is made on that inode, and the
//! connection is made to that inode (`/proc/self/fd/N` of the broker's descriptor), so that a
//! symlink swapped after the check changes nothing. The inode of a socket file belongs to the one
//! socket that created it by bind(2), for as long as the file's inode lives: a decision on it holds
//! while the broker pins the inode with its descriptor, which the cache keeps.
//!
//! The socket bound to a file is found by the kernel's socket diagnostics; only a listener (or a
//! bound datagram socket) counts, and when none is found the connect is refused, never made
//! unchecked: a socket served from another network namespace, which sock_diag does not list, is
//! refused like any outside one.
//!
//! An abstract name is looked up on each connect (a name is free again once its listener closes);
//! the one window left is an outside process binding the very name a job's listener released
//! between the lookup and the connect, microseconds the job cannot stretch.

mod abstract_name;
mod path;
mod resolve;

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Arc;

use crate::sandbox::notify::Answer;
use crate::supervise::broker::caller::Caller;
use crate::supervise::broker::listeners;
use crate::supervise::broker::Verdict;

pub use resolve::address_of;

/// Offset of `sun_path` in `struct sockaddr_un`.
pub(super) const SUN_PATH: usize = 2;
/// Socket files decided on and pinned at once; past this the cache starts again.
pub(super) const CACHE: usize = 128;

/// The unix side of one job's broker.
pub struct Unix {
    /// Outside listeners the policy names: canonical socket files or directories.
    allowed: Vec<PathBuf>,
    /// Abstract sockets outside the job are refused.
    abstract_scoped: bool,
    /// The job's processes.
    members: listeners::Members,
    /// Socket files by (device, inode): pinned, and whether the job serves them.
    files: HashMap<(u64, u64), (Arc<OwnedFd>, bool)>,
    /// Abstract sockets by their own inode (never reused while the system runs): whether the job
    /// holds them.
    sockets: HashMap<u32, bool>,
}

impl Unix {
    pub fn new(allowed: Vec<PathBuf>, abstract_scoped: bool, members: listeners::Members) -> Unix {
        Unix {
            allowed,
            abstract_scoped,
            members,
            files: HashMap::new(),
            sockets: HashMap::new(),
        }
    }

    /// The job's processes.
    pub fn members(&self) -> &listeners::Members {
        &self.members
    }

    /// The verdict on connecting a unix socket of `caller` to `addr` (the address it gave, read
    /// once).
    pub fn connect(&mut self, caller: &Caller, addr: &[u8]) -> Verdict {
        let family = addr
            .get(..SUN_PATH)
            .map(|f| u16::from_ne_bytes([f[0], f[1]]));
        // Anything but a named AF_UNIX address (AF_UNSPEC to disconnect a datagram socket, a short
        // or overlong one) is the kernel's to accept or refuse: nothing is reached through it.
        if family != Some(libc::AF_UNIX as u16) || addr.len() <= SUN_PATH {
            return Verdict::Connect;
        }
        let path = &addr[SUN_PATH..];
        match path.split_first() {
            Some((0, name)) => self.connect_abstract(name),
            _ => {
                // The kernel reads sun_path as a C string within the length given.
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                self.connect_path(caller, &path[..end])
            }
        }
    }

    /// The socket file is one the policy names, or lies beneath a directory it names. Compared by
    /// the path the kernel gives the open file itself, which no symlink can fake.
    pub(super) fn named_by_policy(&self, file: &OwnedFd) -> bool {
        if self.allowed.is_empty() {
            return false;
        }
        let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) else {
            return false;
        };
        self.allowed
            .iter()
            .any(|rule| real == *rule || (real.starts_with(rule) && rule.is_dir()))
    }
}

/// Allowed: connect to the very file that was checked (shared with the cache, which may drop its
/// copy before a worker has connected).
pub(super) fn connect_to(file: &Arc<OwnedFd>) -> Verdict {
    Verdict::ConnectTo(Arc::clone(file))
}

/// The sockets that serve an address, as `names` picks them out of sock_diag's dump (a listener or
/// a bound datagram socket only); the verdict instead when the dump fails (refused) or nothing
/// serves there (ECONNREFUSED, as the kernel would say).
pub(super) fn serving(
    names: impl Fn(&listeners::Bound) -> bool,
) -> Result<Vec<listeners::Bound>, Verdict> {
    let serving: Vec<listeners::Bound> = match listeners::bound() {
        Ok(all) => all.into_iter().filter(|b| names(b) && b.serves()).collect(),
        Err(_) => return Err(Verdict::Refused),
    };
    if serving.is_empty() {
        return Err(Verdict::Done(Answer::Errno(libc::ECONNREFUSED)));
    }
    Ok(serving)
}
