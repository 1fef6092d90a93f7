//! Which unix socket is bound where (and which TCP listener, inet.rs), and whether the job holds
//! it: the kernel's socket diagnostics (sock_diag(7), `NETLINK_SOCK_DIAG` with `UNIX_DIAG_VFS`
//! and `UNIX_DIAG_NAME`) map a socket file's inode, or an abstract name, to the socket bound
//! there; the job's descriptor tables
//! (`/proc/<pid>/fd`, `socket:[N]`) say whether a process of the job holds that socket.
//!
//! The request and the replies are three fixed C structures and a list of attributes, written here
//! directly: the crate that models them (netlink-packet-sock-diag 0.5) keeps the inode and device of
//! `UNIX_DIAG_VFS` private, and one reply it cannot parse would fail the whole dump.

mod diag;
mod identity;
mod inet;
mod members;
mod parse;
#[cfg(test)]
mod tests;

pub use diag::bound;
pub use identity::identity;
pub use inet::{others_listen, serving, Listening, Server};
pub use members::{held_by_job, Members};

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
