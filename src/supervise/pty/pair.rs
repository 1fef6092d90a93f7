//! The pseudo-terminal pair of a job ([`Pty`]): opened, and given the user's window size and
//! termios. Neither end may ever become the supervisor's controlling terminal (`O_NOCTTY`), nor
//! leak into a process isolate starts (close-on-exec).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use super::syscall::{cvt, retry};
use super::termios::{get_termios, set_termios};

/// A pseudo-terminal pair, both ends close-on-exec and opened with `O_NOCTTY`, so that neither
/// becomes the supervisor's controlling terminal by accident.
pub struct Pty {
    /// The supervisor's end: what the job writes to its terminal is read here, and what is
    /// written here is the job's keyboard input.
    pub master: OwnedFd,
    /// The job's terminal. The supervisor must drop its copy once the job is spawned.
    pub slave: OwnedFd,
}

impl Pty {
    /// Opens a new pair (`posix_openpt`, `grantpt`, `unlockpt`, then the slave).
    pub fn open() -> io::Result<Pty> {
        let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
        // SAFETY: plain system calls; the descriptor is owned right after it is checked.
        let master = unsafe { OwnedFd::from_raw_fd(cvt(libc::posix_openpt(flags))?) };
        // SAFETY: the calls only read the descriptor.
        unsafe {
            cvt(libc::grantpt(master.as_raw_fd()))?;
            cvt(libc::unlockpt(master.as_raw_fd()))?;
        }
        let slave = open_slave(&master, flags)?;
        Ok(Pty { master, slave })
    }

    /// Copies the window size of `from` (the user's terminal) to the pty. Setting it on the
    /// master sends SIGWINCH to the job's foreground process group when the size changes, so
    /// this is the whole of the supervisor's SIGWINCH handling.
    pub fn copy_winsize(&self, from: BorrowedFd<'_>) -> io::Result<()> {
        // SAFETY: winsize is plain data; the ioctls read or write exactly one.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ writes exactly one winsize into `size`, which outlives the call.
        retry(|| unsafe { libc::ioctl(from.as_raw_fd(), libc::TIOCGWINSZ, &mut size) })?;
        // SAFETY: TIOCSWINSZ reads exactly one winsize from `size`, which outlives the call.
        retry(|| unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &size) })?;
        Ok(())
    }

    /// Sets the pty's window size (rows, columns): the job's foreground group gets SIGWINCH.
    pub fn set_winsize(&self, rows: u16, cols: u16) -> io::Result<()> {
        set_size(self.master.as_fd(), rows, cols)
    }

    /// Copies the termios of `from` (the user's terminal) to the slave, so the job's terminal
    /// behaves like the user's (echo, erase character, signal keys, output processing). Call it
    /// before [`RawMode::enter`]: afterwards the user's terminal is raw, and so would the job's be.
    pub fn copy_termios(&self, from: BorrowedFd<'_>) -> io::Result<()> {
        let settings = get_termios(from)?;
        set_termios(self.slave.as_fd(), libc::TCSANOW, &settings)
    }
}

/// Opens the slave of `master` with `flags`.
fn open_slave(master: &OwnedFd, flags: libc::c_int) -> io::Result<OwnedFd> {
    // TIOCGPTPEER (Linux 4.13) opens the peer through the master itself: no path lookup, so no
    // chance of opening another devpts instance's pts/N (containers), nor a replaced path.
    // SAFETY: the ioctl only creates a new descriptor, owned right after the check.
    match cvt(unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCGPTPEER, flags) }) {
        // SAFETY: the ioctl returned a fresh descriptor that nothing else owns.
        Ok(fd) => return Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOTTY)) => {}
        Err(e) => return Err(e),
    }
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: ptsname_r writes a NUL-terminated name of at most `name.len()` bytes.
    let rc = unsafe { libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    // SAFETY: `name` is NUL-terminated (ptsname_r succeeded).
    let fd = retry(|| unsafe { libc::open(name.as_ptr(), flags) })?;
    // SAFETY: a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The window size (rows, columns) of the terminal `fd`, if it is one.
pub fn winsize_of(fd: BorrowedFd<'_>) -> Option<(u16, u16)> {
    // SAFETY: winsize is plain data.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes exactly one winsize into `size`, which outlives the call.
    retry(|| unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) }).ok()?;
    (size.ws_row > 0 && size.ws_col > 0).then_some((size.ws_row, size.ws_col))
}

/// Sets the window size of the terminal (a pty master) `fd`.
pub fn set_size(fd: BorrowedFd<'_>, rows: u16, cols: u16) -> io::Result<()> {
    let size = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads exactly one winsize from `size`, which outlives the call.
    retry(|| unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCSWINSZ, &size) })?;
    Ok(())
}
