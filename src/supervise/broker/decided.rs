//! What deciding one call comes to, as data: the verdict with the caller's socket and address
//! ([`Decided`]), what a refusal is counted as ([`Kind`]), or that there is nothing to answer.

use std::os::fd::OwnedFd;

use super::Verdict;
use crate::sandbox::notify::Answer;

/// What a refusal is counted as.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Unix,
    Tcp,
    Listen,
    /// System V IPC or a POSIX message queue outside an IPC namespace of the job's own.
    Ipc,
    /// A call on a process that is not the job's.
    Process,
}

/// One call, decided: the verdict, the caller's socket, and the address it gave.
pub(super) struct Decided {
    pub(super) verdict: Verdict,
    pub(super) kind: Kind,
    pub(super) socket: Option<OwnedFd>,
    pub(super) addr: Vec<u8>,
}

/// What `decide` came to.
pub(super) enum Decision {
    Decided(Decided),
    /// The call needs no answer: its thread is gone.
    Gone,
    /// The kept pidfd of the caller's id was a dead thread's.
    Stale,
}

impl Decided {
    pub(super) fn failed(errno: i32) -> Decision {
        Decision::Decided(Decided {
            verdict: Verdict::Done(Answer::Errno(errno)),
            kind: Kind::Tcp,
            socket: None,
            addr: Vec::new(),
        })
    }
}
