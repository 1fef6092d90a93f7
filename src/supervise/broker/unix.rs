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

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::sandbox::notify::Answer;
use crate::supervise::broker::caller::{open_path_at, Caller};
use crate::supervise::broker::listeners;
use crate::supervise::broker::Verdict;

/// Offset of `sun_path` in `struct sockaddr_un`.
const SUN_PATH: usize = 2;
/// Socket files decided on and pinned at once; past this the cache starts again.
const CACHE: usize = 128;

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

    fn connect_path(&mut self, caller: &Caller, path: &[u8]) -> Verdict {
        let file = match resolve(caller, path) {
            Ok(file) => Arc::new(file),
            Err(errno) => return Verdict::Done(Answer::Errno(errno)),
        };
        // SAFETY: fstat fills `st`, which outlives the call.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes one stat into `st`, which outlives the call; `file` is ours.
        if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
            return Verdict::Done(Answer::Errno(libc::EIO));
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
            return Verdict::Done(Answer::Errno(libc::ECONNREFUSED));
        }
        if self.named_by_policy(&file) {
            return connect_to(&file);
        }
        let key = (st.st_dev, st.st_ino);
        if let Some((pinned, own)) = self.files.get(&key) {
            return match own {
                true => connect_to(pinned),
                false => Verdict::Refused,
            };
        }
        // The sockets a connect to this file reaches, as sock_diag names them. None: no listener
        // (the kernel would refuse), or one served where sock_diag cannot see (another network
        // namespace): refused either way, never connected unchecked. Several (btrfs subvolumes
        // share a superblock, and so inode numbers): each must be the job's.
        let Ok(wanted) = listeners::identity(&file) else {
            return Verdict::Refused;
        };
        let serving: Vec<listeners::Bound> = match listeners::bound() {
            Ok(all) => all
                .into_iter()
                .filter(|b| b.file == Some(wanted) && b.serves())
                .collect(),
            Err(_) => return Verdict::Refused,
        };
        if serving.is_empty() {
            return Verdict::Done(Answer::Errno(libc::ECONNREFUSED));
        }
        let own = serving
            .iter()
            .all(|b| listeners::held_by_job(b.socket, &self.members));
        let answer = match own {
            true => connect_to(&file),
            false => Verdict::Refused,
        };
        if self.files.len() >= CACHE {
            self.files.clear();
        }
        self.files.insert(key, (file, own));
        answer
    }

    fn connect_abstract(&mut self, name: &[u8]) -> Verdict {
        if !self.abstract_scoped {
            return Verdict::Connect;
        }
        // Only a listener (or a bound datagram socket) holds a name: an accepted socket keeps its
        // listener's name after the listener is gone, and must not vouch for whoever binds the
        // name next.
        let serving: Vec<listeners::Bound> = match listeners::bound() {
            Ok(all) => all
                .into_iter()
                .filter(|b| b.abstract_name.as_deref() == Some(name) && b.serves())
                .collect(),
            Err(_) => return Verdict::Refused,
        };
        if serving.is_empty() {
            return Verdict::Done(Answer::Errno(libc::ECONNREFUSED));
        }
        if self.sockets.len() >= CACHE {
            self.sockets.clear();
        }
        let members = &self.members;
        let own = serving.iter().all(|b| {
            *self
                .sockets
                .entry(b.socket)
                .or_insert_with(|| listeners::held_by_job(b.socket, members))
        });
        match own {
            true => Verdict::Connect,
            false => Verdict::Refused,
        }
    }

    /// The socket file is one the policy names, or lies beneath a directory it names. Compared by
    /// the path the kernel gives the open file itself, which no symlink can fake.
    fn named_by_policy(&self, file: &OwnedFd) -> bool {
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

/// `base/rest`, opened as a path.
fn own(rest: &Path, base: String) -> Result<OwnedFd, i32> {
    let full = Path::new(&base).join(rest);
    let full = CString::new(full.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    open_path_at(libc::AT_FDCWD, &full, 0)
}

/// Opens the socket file at `path` as the caller would find it: relative to its thread's working
/// directory, `/proc/self` and `/dev/fd` meaning the caller's. (A symlink the job planted that
/// points into `/proc/self` resolves as the broker's: at worst a refusal, never a wider grant,
/// since only the job's own sockets and those the policy names are ever connected.)
fn resolve(caller: &Caller, path: &[u8]) -> Result<OwnedFd, i32> {
    let text = Path::new(std::ffi::OsStr::from_bytes(path));
    if path.first() != Some(&b'/') {
        // The caller thread's working directory, and the path beneath it, in one lookup.
        return own(text, format!("/proc/{}/cwd", caller.tid()));
    }
    // The caller's own /proc directory (a thread's: its working directory, the descriptor table
    // it uses), for the names that mean "this process" in the caller's mouth.
    let me = format!("/proc/{}", caller.tid());
    for (prefix, base) in [
        ("/proc/self", me.clone()),
        ("/proc/thread-self", format!("{me}/task/{}", caller.tid())),
        ("/dev/fd", format!("{me}/fd")),
    ] {
        if let Ok(rest) = text.strip_prefix(prefix) {
            return own(rest, base);
        }
    }
    for (n, name) in ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
        .iter()
        .enumerate()
    {
        if text == Path::new(name) {
            return own(Path::new(&n.to_string()), format!("{me}/fd"));
        }
    }
    let path = CString::new(path).map_err(|_| libc::EINVAL)?;
    open_path_at(libc::AT_FDCWD, &path, 0)
}

/// The address that names the socket file `file` itself: `/proc/self/fd/N` of the broker's
/// descriptor, valid while `file` is open.
pub fn address_of(file: &OwnedFd) -> Vec<u8> {
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let mut addr = Vec::with_capacity(SUN_PATH + path.len() + 1);
    addr.extend_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
    addr.extend_from_slice(path.as_bytes());
    addr.push(0);
    addr
}

/// Allowed: connect to the very file that was checked (shared with the cache, which may drop its
/// copy before a worker has connected).
fn connect_to(file: &Arc<OwnedFd>) -> Verdict {
    Verdict::ConnectTo(Arc::clone(file))
}
