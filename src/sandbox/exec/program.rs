//! Which program the supervisor starts as the helper: `isolate-sandbox-exec` beside isolate's own
//! executable, where it is a plain file of the same owner that nobody else may write (as `cargo
//! install` leaves it), since it starts in a fraction of isolate's time; else isolate itself. Both
//! take the same arguments. The file beside isolate is judged on a descriptor, and that descriptor
//! is what gets executed: nothing swapped in after the check runs. Where that file cannot be
//! exec'd (the caller may not execute it, it is no executable of this machine), isolate is
//! (spawn/child.rs); where it is of another build (`cargo build --bin isolate` relinked isolate
//! alone), it execs isolate in its own place (`FALLBACK_VAR`), before it reads the plan.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{open, OFlag};
use nix::sys::stat::{fstat, Mode, SFlag};

use super::PROGRAM;

/// The helper's program, held open from its check to the exec.
#[derive(Debug)]
pub struct Program {
    path: PathBuf,
    /// With the helper beside isolate: isolate itself, for when that helper cannot be exec'd or
    /// is of another build.
    fallback: Option<PathBuf>,
    _held: Option<OwnedFd>,
}

impl Program {
    /// The path to exec: `/proc/self/fd/N` for the checked file (close-on-exec, so the helper
    /// does not keep it), else isolate's own executable.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// isolate's own executable, when the helper is the file beside it.
    pub fn fallback(&self) -> Option<&Path> {
        self.fallback.as_deref()
    }
}

/// The helper to start.
pub fn program() -> std::io::Result<Program> {
    let isolate = std::env::current_exe()?;
    match beside(&isolate) {
        Some(fd) => Ok(Program {
            path: PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())),
            fallback: Some(isolate),
            _held: Some(fd),
        }),
        None => Ok(Program {
            path: isolate,
            fallback: None,
            _held: None,
        }),
    }
}

/// `isolate-sandbox-exec` beside `isolate`, opened without following a link, if it is a plain
/// executable file of isolate's owner with no group or other write bit.
fn beside(isolate: &Path) -> Option<OwnedFd> {
    let own = std::fs::metadata(isolate).ok()?;
    let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = open(&isolate.with_file_name(PROGRAM), flags, Mode::empty()).ok()?;
    let st = fstat(&fd).ok()?;
    let plain = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG;
    let ours = st.st_uid == std::os::unix::fs::MetadataExt::uid(&own);
    let mode = st.st_mode;
    (plain && ours && mode & 0o022 == 0 && mode & 0o100 != 0).then_some(fd)
}
