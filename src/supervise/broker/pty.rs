//! The other end of a pty the job made (`ioctl(master, TIOCGPTPEER, flags)`, which is how libc's
//! `openpty` gets it). The job may open `/dev/ptmx` and so make ptys, but never the devpts directory
//! where they appear, for that is also where the user's own terminals are (the job would read their
//! keystrokes, write to them, and with device ioctls push keystrokes in). So the kernel would refuse
//! the job its own pty's other end; the broker opens it instead, from the master the job holds, and
//! copies it into the job. Only a pty master gets an answer: its other end is the job's own.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The device numbers of `/dev/ptmx` (and of each devpts instance's `ptmx`).
const PTMX: (u32, u32) = (5, 2);

/// The other end of the pty whose master is `master`, opened with the `flags` the job asked for
/// (access mode, `O_NOCTTY`, `O_NONBLOCK`, `O_CLOEXEC`), and whether the job's copy is close-on-exec.
pub fn peer(master: &OwnedFd, flags: u64) -> Result<(OwnedFd, bool), i32> {
    // SAFETY: fstat fills a plain struct from our own descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes one stat into `st`, which outlives the call; `master` is borrowed.
    if unsafe { libc::fstat(master.as_raw_fd(), &mut st) } != 0 {
        return Err(last_errno());
    }
    let is_ptmx = st.st_mode & libc::S_IFMT == libc::S_IFCHR
        && (libc::major(st.st_rdev), libc::minor(st.st_rdev)) == PTMX;
    if !is_ptmx {
        // As the kernel answers TIOCGPTPEER on anything but a pty master.
        return Err(libc::ENOTTY);
    }
    let wanted =
        (flags as i32) & (libc::O_ACCMODE | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC);
    // SAFETY: an ioctl on our copy of the job's master; it returns a new descriptor or -1.
    let fd = unsafe {
        libc::ioctl(
            master.as_raw_fd(),
            libc::TIOCGPTPEER as _,
            wanted | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: a new descriptor that nothing else owns.
    let slave = unsafe { OwnedFd::from_raw_fd(fd) };
    Ok((slave, wanted & libc::O_CLOEXEC != 0))
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}
