//! One standard stream of a process isolate starts: the supervisor's own, `/dev/null`, or a
//! descriptor of its own (a pipe, the log, a file). Made before the fork, so that the child only
//! `dup2`s.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// What a standard stream of the child is.
#[derive(Debug)]
pub struct Stdio(Source);

#[derive(Debug)]
enum Source {
    Inherit,
    Null,
    Fd(OwnedFd),
}

impl Stdio {
    /// The supervisor's own stream.
    pub fn inherit() -> Stdio {
        Stdio(Source::Inherit)
    }

    /// `/dev/null`, opened for reading and writing.
    pub fn null() -> Stdio {
        Stdio(Source::Null)
    }

    /// Opens what is to be opened (`/dev/null`): the descriptor the child `dup2`s onto its stream
    /// (`None`: the stream is left as it is), held by the returned value until after the fork.
    pub(super) fn open(self) -> io::Result<Opened> {
        Ok(Opened(match self.0 {
            Source::Inherit => None,
            Source::Null => Some(OwnedFd::from(
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/null")?,
            )),
            Source::Fd(fd) => Some(fd),
        }))
    }
}

/// A stream ready for the child: the descriptor to `dup2`, kept open until the fork is done.
pub(super) struct Opened(Option<OwnedFd>);

impl Opened {
    pub(super) fn raw(&self) -> Option<RawFd> {
        self.0.as_ref().map(AsRawFd::as_raw_fd)
    }
}

impl From<OwnedFd> for Stdio {
    fn from(fd: OwnedFd) -> Stdio {
        Stdio(Source::Fd(fd))
    }
}

impl From<File> for Stdio {
    fn from(file: File) -> Stdio {
        Stdio(Source::Fd(OwnedFd::from(file)))
    }
}
