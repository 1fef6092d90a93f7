//! A pipe whose both ends are close-on-exec, so that no process isolate starts inherits one by
//! accident: the one way every layer makes a pipe.

use std::io;
use std::os::fd::OwnedFd;

/// A close-on-exec pipe: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(io::Error::from)
}
