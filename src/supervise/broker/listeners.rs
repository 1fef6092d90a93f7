//! Which unix socket is bound where, and whether the job holds it: the kernel's socket diagnostics
//! (sock_diag(7), `NETLINK_SOCK_DIAG` with `UNIX_DIAG_VFS` and `UNIX_DIAG_NAME`) map a socket file's
//! inode, or an abstract name, to the socket bound there; the job's descriptor tables
//! (`/proc/<pid>/fd`, `socket:[N]`) say whether a process of the job holds that socket.
//!
//! The request and the replies are three fixed C structures and a list of attributes, written here
//! directly: the crate that models them (netlink-packet-sock-diag 0.5) keeps the inode and device of
//! `UNIX_DIAG_VFS` private, and one reply it cannot parse would fail the whole dump.

use std::collections::HashSet;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

use nix::unistd::Pid;

use crate::supervise::tree;
use crate::sys::pidfd::PidFd;

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const UDIAG_SHOW_NAME: u32 = 1;
const UDIAG_SHOW_VFS: u32 = 2;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_VFS: u16 = 1;
/// struct nlmsghdr, struct unix_diag_msg.
const NLMSG_HDR: usize = 16;
const DIAG_MSG: usize = 16;

/// One bound unix socket, as the kernel reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// The socket's own inode (`socket:[N]` in a holder's descriptor table).
    pub socket: u32,
    /// `SOCK_STREAM`, `SOCK_DGRAM` or `SOCK_SEQPACKET`.
    pub kind: u8,
    /// Its state (`TCP_LISTEN` for a listener).
    pub state: u8,
    /// The socket file's device (kernel encoding) and inode, for a path-named socket.
    pub file: Option<(u32, u32)>,
    /// The name of an abstract socket (without its leading NUL).
    pub abstract_name: Option<Vec<u8>>,
}

const TCP_LISTEN: u8 = 10;

impl Bound {
    /// A connect to its address reaches it: a listener, or a bound datagram socket. (An accepted
    /// socket shares its listener's address and is reported with it, but no connect reaches it.)
    pub fn serves(&self) -> bool {
        self.state == TCP_LISTEN || self.kind == libc::SOCK_DGRAM as u8
    }
}

/// The identity sock_diag gives the socket file `file` is open on: its superblock's device and
/// its inode number, read from `/proc/self/fdinfo` and `/proc/self/mountinfo`. (`stat` gives a
/// btrfs subvolume's device, or an overlay's lower filesystem's, where sock_diag gives the
/// superblock's.)
pub fn identity(file: &OwnedFd) -> std::io::Result<(u32, u32)> {
    let bad = || std::io::Error::other("unexpected /proc/self/fdinfo or mountinfo");
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", file.as_raw_fd()))?;
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let (mount, ino) = (
        field("mnt_id:").ok_or_else(bad)?,
        field("ino:").ok_or_else(bad)?,
    );
    let mounts = std::fs::read_to_string("/proc/self/mountinfo")?;
    let dev = mounts
        .lines()
        .find_map(|line| {
            let mut fields = line.split(' ');
            let id: u64 = fields.next()?.parse().ok()?;
            let dev = fields.nth(1)?;
            (id == mount).then(|| dev.to_string())
        })
        .ok_or_else(bad)?;
    let (major, minor) = dev.split_once(':').ok_or_else(bad)?;
    let (major, minor): (u32, u32) = (
        major.parse().map_err(|_| bad())?,
        minor.parse().map_err(|_| bad())?,
    );
    Ok(((major << 20) | (minor & 0xfffff), ino as u32))
}

/// Every bound unix socket of this network namespace (listening or not: a bound socket that has
/// not called listen() yet will be served by whoever bound it).
pub fn bound() -> std::io::Result<Vec<Bound>> {
    // SAFETY: socket(2) returns a new descriptor or -1.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            libc::NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // struct nlmsghdr: length, type, flags, sequence, port (the kernel fills it in).
    let mut request = Vec::with_capacity(NLMSG_HDR + 24);
    request.extend_from_slice(&((NLMSG_HDR + 24) as u32).to_ne_bytes());
    request.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    request.extend_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
    request.extend_from_slice(&1u32.to_ne_bytes());
    request.extend_from_slice(&0u32.to_ne_bytes());
    // struct unix_diag_req: family, protocol, pad, states (all), inode (all), what to show, cookie.
    request.extend_from_slice(&[libc::AF_UNIX as u8, 0, 0, 0]);
    request.extend_from_slice(&u32::MAX.to_ne_bytes());
    request.extend_from_slice(&0u32.to_ne_bytes());
    request.extend_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_VFS).to_ne_bytes());
    request.extend_from_slice(&[0xff; 8]);
    // SAFETY: sockaddr_nl is plain data; zeroed (port 0, no groups) addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: `request` and `kernel` are valid for the lengths given.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            request.as_ptr().cast(),
            request.len(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if sent < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: recv writes at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(err);
        }
        let mut rest = &buf[..n as usize];
        while rest.len() >= NLMSG_HDR {
            let len = u32::from_ne_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            let kind = u16::from_ne_bytes([rest[4], rest[5]]);
            if len < NLMSG_HDR || len > rest.len() {
                return Err(std::io::Error::other("malformed sock_diag reply"));
            }
            match kind {
                NLMSG_DONE => return Ok(out),
                NLMSG_ERROR => return Err(std::io::Error::other("sock_diag refused the request")),
                SOCK_DIAG_BY_FAMILY => {
                    if let Some(b) = parse(&rest[NLMSG_HDR..len]) {
                        out.push(b);
                    }
                }
                _ => {}
            }
            rest = &rest[align(len).min(rest.len())..];
        }
    }
}

fn align(n: usize) -> usize {
    (n + 3) & !3
}

/// One `unix_diag_msg` and its attributes; `None` for a socket that is bound nowhere.
fn parse(msg: &[u8]) -> Option<Bound> {
    if msg.len() < DIAG_MSG {
        return None;
    }
    let socket = u32::from_ne_bytes([msg[4], msg[5], msg[6], msg[7]]);
    let mut bound = Bound {
        socket,
        kind: msg[1],
        state: msg[2],
        file: None,
        abstract_name: None,
    };
    let mut attrs = &msg[DIAG_MSG..];
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let kind = u16::from_ne_bytes([attrs[2], attrs[3]]);
        if len < 4 || len > attrs.len() {
            break;
        }
        let payload = &attrs[4..len];
        match kind {
            UNIX_DIAG_VFS if payload.len() >= 8 => {
                let ino = u32::from_ne_bytes([payload[0], payload[1], payload[2], payload[3]]);
                let dev = u32::from_ne_bytes([payload[4], payload[5], payload[6], payload[7]]);
                bound.file = Some((dev, ino));
            }
            UNIX_DIAG_NAME => {
                if let Some((0, name)) = payload.split_first() {
                    bound.abstract_name = Some(name.to_vec());
                }
            }
            _ => {}
        }
        attrs = &attrs[align(len).min(attrs.len())..];
    }
    (bound.file.is_some() || bound.abstract_name.is_some()).then_some(bound)
}

/// The processes of a job: its cgroup's, where it has one, else the descendants of the supervisor.
#[derive(Debug, Clone)]
pub struct Members {
    /// The supervisor: a child subreaper, so every process of the job stays its descendant.
    pub root: Pid,
    /// The job's own cgroup v2 directory.
    pub cgroup: Option<std::path::PathBuf>,
}

impl Members {
    fn pids(&self) -> Vec<Pid> {
        match &self.cgroup {
            Some(dir) => std::fs::read_to_string(dir.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .map(Pid::from_raw)
                .collect(),
            None => tree::descendants(self.root),
        }
    }

    /// `pid` is (still) a process of the job.
    fn contains(&self, pid: Pid) -> bool {
        match &self.cgroup {
            Some(_) => self.pids().contains(&pid),
            None => tree::descendants(self.root).contains(&pid),
        }
    }
}

/// Whether a process of the job holds the socket whose inode is `socket`. Each process is held by
/// a pidfd while its descriptors are read, and counted only if it is a member after the pidfd was
/// opened and alive after its descriptors were read: a pid that ended and was reused by another
/// process meanwhile never vouches for a socket.
pub fn held_by_job(socket: u32, job: &Members) -> bool {
    let wanted = format!("socket:[{socket}]");
    let mut seen = HashSet::new();
    job.pids().into_iter().any(|pid| {
        if !seen.insert(pid) {
            return false;
        }
        let Ok(pidfd) = PidFd::open(pid.as_raw(), 0) else {
            return false;
        };
        if !job.contains(pid) {
            return false;
        }
        let holds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|entry| {
                std::fs::read_link(entry.path())
                    .is_ok_and(|target| target.as_os_str() == wanted.as_str())
            });
        // SAFETY: pidfd_send_signal with signal 0 only checks that the process still exists.
        let alive = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                pidfd.as_fd().as_raw_fd(),
                0,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        } == 0;
        holds && alive
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::net::{SocketAddr, UnixListener};

    /// The kernel's encoding of a device number (`MAJOR << 20 | MINOR`), as sock_diag reports it,
    /// from the one `stat(2)` gives.
    pub fn kernel_dev(st_dev: u64) -> u32 {
        let major = libc::major(st_dev);
        let minor = libc::minor(st_dev);
        (major << 20) | (minor & 0xfffff)
    }

    #[test]
    fn a_bound_socket_is_found_by_its_file_and_by_its_abstract_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let _listener = UnixListener::bind(&path).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let file = (kernel_dev(meta.dev()), meta.ino() as u32);
        let opened: OwnedFd = std::fs::File::open(dir.path())
            .map(|_| {
                nix::fcntl::open(
                    &path,
                    nix::fcntl::OFlag::O_PATH,
                    nix::sys::stat::Mode::empty(),
                )
                .unwrap()
            })
            .unwrap();
        assert_eq!(identity(&opened).unwrap(), file);
        let name = format!("isolate-diag-test-{}", std::process::id());
        let _abstract =
            UnixListener::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
        let all = bound().unwrap();
        assert!(
            all.iter().any(|b| b.file == Some(file) && b.serves()),
            "{all:?}"
        );
        assert!(all
            .iter()
            .any(|b| b.abstract_name.as_deref() == Some(name.as_bytes())));
    }
}
