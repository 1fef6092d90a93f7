//! The job's own terminal in interactive mode, relayed to the user's, as sudo's pty monitor or
//! `script(1)` do: a job that shared the user's terminal could push keystrokes into the user's
//! shell with `TIOCSTI` (supervise.md). This module owns the pseudo-terminal pair ([`Pty`]), the
//! child's side of attaching it ([`attach_controlling_terminal`]), the user's terminal in raw mode
//! ([`RawMode`]) and the byte relay between the two ([`Relay`]).
//!
//! It must never hand the job a descriptor of the user's terminal, never change the flags of the
//! user's descriptors (`O_NONBLOCK` lives in the file description the user's shell shares, and
//! would outlive us), never leave the user's terminal raw, and never keep the supervisor alive or
//! keep reading the user's keystrokes once the job's side is gone.
//!
//! The sequence, for the supervisor:
//! 1. [`Pty::open`]; [`Pty::copy_termios`] and [`Pty::copy_winsize`] from the user's terminal;
//! 2. spawn with `setsid` then [`attach_controlling_terminal`] between fork and exec;
//! 3. **drop its own copy of [`Pty::slave`]**: the master reports the end (EOF, or `EIO` on Linux)
//!    only once *every* holder of the slave has closed it;
//! 4. [`RawMode::enter`] on the user's terminal, [`Relay::start`];
//! 5. on SIGWINCH [`Pty::copy_winsize`]; around its own stop for Ctrl-Z [`RawMode::suspend`] and
//!    [`RawMode::resume`];
//! 6. once the job's tree is gone, [`Relay::finish`], then drop the [`RawMode`].

use crate::sys::pipe::pipe;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

/// One direction's buffer: large enough for a burst of terminal output, small enough for the
/// supervisor's memory budget (two of them in all).
const BUF_SIZE: usize = 16 * 1024;

/// Stack of a relay thread: the buffers live on the heap and nothing recurses.
const THREAD_STACK: usize = 128 * 1024;

/// How long [`Relay::finish`] waits for a thread it has told to stop: one blocked in a plain
/// `read` or `write` on the user's terminal cannot notice, and is left behind (it owns its own
/// duplicates of every descriptor it uses, so nothing it touches is ever reused under it).
const STOP_GRACE: Duration = Duration::from_millis(200);

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

/// For the child, between fork and exec, after `setsid`: makes `slave` its controlling terminal
/// and its descriptors 0, 1 and 2. `slave` should be close-on-exec (as [`Pty::open`] makes it),
/// so that exec leaves the job with the standard descriptors only.
///
/// `TIOCSCTTY` is given 0, never 1: the call fails (EPERM) rather than steal a terminal that is
/// already another session's, which a root supervisor could otherwise do. It also makes the
/// caller's process group the terminal's foreground group, so the job's Ctrl-C reaches it.
///
/// # Safety
/// Only async-signal-safe calls (ioctl, dup2, fcntl); meant for `pre_exec`. It replaces the
/// calling process's descriptors 0, 1 and 2.
pub unsafe fn attach_controlling_terminal(slave: RawFd) -> io::Result<()> {
    if libc::ioctl(slave, libc::TIOCSCTTY, 0 as libc::c_int) < 0 {
        return Err(io::Error::last_os_error());
    }
    for target in 0..=2 {
        if slave == target {
            // dup2(fd, fd) does nothing, so it would leave close-on-exec set on the very
            // descriptor the job needs: clear the flag by hand.
            if libc::fcntl(target, libc::F_SETFD, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            continue;
        }
        while libc::dup2(slave, target) < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// The user's terminal in raw mode: every byte goes to the job as typed (Ctrl-C, Ctrl-Z and
/// Ctrl-S included; the job's own terminal interprets them), and output is not post-processed
/// (the job's terminal already did). Restores the exact original settings when dropped, and on
/// demand around the supervisor's own stop.
///
/// Settings are applied with `TCSADRAIN`, not `TCSAFLUSH` as many programs do: flushing would
/// throw away what the user typed ahead before the job started (entering), or keystrokes meant
/// for the shell (restoring). Draining lets output already written be transmitted under the
/// settings it was written for. Entering is meant for the foreground: in a background process
/// group the kernel stops the supervisor with SIGTTOU until it is foreground again.
pub struct RawMode<'fd> {
    fd: BorrowedFd<'fd>,
    original: libc::termios,
    raw: libc::termios,
    active: bool,
}

impl<'fd> RawMode<'fd> {
    /// Puts `fd` (the user's terminal) in raw mode, after recording its settings.
    pub fn enter(fd: BorrowedFd<'fd>) -> io::Result<RawMode<'fd>> {
        let original = get_termios(fd)?;
        let raw = make_raw(original);
        set_termios(fd, libc::TCSADRAIN, &raw)?;
        Ok(RawMode {
            fd,
            original,
            raw,
            active: true,
        })
    }

    /// Restores the original settings, before the supervisor stops itself (Ctrl-Z). Does
    /// nothing when already suspended.
    pub fn suspend(&mut self) -> io::Result<()> {
        if self.active {
            set_termios(self.fd, libc::TCSADRAIN, &self.original)?;
            self.active = false;
        }
        Ok(())
    }

    /// Raw again, after SIGCONT. Does nothing when already raw.
    pub fn resume(&mut self) -> io::Result<()> {
        if !self.active {
            set_termios(self.fd, libc::TCSADRAIN, &self.raw)?;
            self.active = true;
        }
        Ok(())
    }
}

impl Drop for RawMode<'_> {
    /// Restores the original settings unless suspended (then they already are, and the shell
    /// may have set others since that are not ours to undo).
    fn drop(&mut self) {
        let _ = self.suspend();
    }
}

/// `cfmakeraw(3)`, spelled out (the libc binding's return type differs between targets).
fn make_raw(mut t: libc::termios) -> libc::termios {
    t.c_iflag &= !(libc::IGNBRK
        | libc::BRKINT
        | libc::PARMRK
        | libc::ISTRIP
        | libc::INLCR
        | libc::IGNCR
        | libc::ICRNL
        | libc::IXON);
    t.c_oflag &= !libc::OPOST;
    t.c_lflag &= !(libc::ECHO | libc::ECHONL | libc::ICANON | libc::ISIG | libc::IEXTEN);
    t.c_cflag &= !(libc::CSIZE | libc::PARENB);
    t.c_cflag |= libc::CS8;
    t.c_cc[libc::VMIN] = 1;
    t.c_cc[libc::VTIME] = 0;
    t
}

fn get_termios(fd: BorrowedFd<'_>) -> io::Result<libc::termios> {
    // SAFETY: termios is plain data, filled in by tcgetattr.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: tcgetattr writes exactly one termios into `t`, which outlives the call.
    retry(|| unsafe { libc::tcgetattr(fd.as_raw_fd(), &mut t) })?;
    Ok(t)
}

fn set_termios(fd: BorrowedFd<'_>, when: libc::c_int, t: &libc::termios) -> io::Result<()> {
    // SAFETY: tcsetattr only reads `t`.
    retry(|| unsafe { libc::tcsetattr(fd.as_raw_fd(), when, t) })?;
    Ok(())
}

/// How the job's output direction of a [`Relay`] ended.
#[derive(Debug)]
pub enum RelayEnd {
    /// Every holder of the slave closed it, and everything written to it before reached the
    /// output.
    Drained,
    /// Writing to the output failed (the user's terminal hung up, say). The job's output was
    /// still read to the end, and discarded, so that the job never blocked on a dead terminal.
    OutputFailed(io::Error),
    /// Reading the master failed with something other than the end.
    MasterFailed(io::Error),
    /// The timeout of [`Relay::finish`] passed first: something still holds the slave, or the
    /// output does not take what is written. The relay was told to stop.
    TimedOut,
}

/// The relay between the user's terminal and the job's: two threads, one per direction, so a job
/// that does not read its input never holds up its output. Each uses its own duplicates of the
/// descriptors and one fixed buffer. The master is put in non-blocking mode (its file
/// description is the supervisor's alone); the user's descriptors keep their flags, and a
/// thread waits for them with `poll` on the descriptor and on a stop pipe, so that
/// [`Relay::finish`] (or dropping the relay) stops it. A thread never keeps the process alive:
/// the supervisor may exit while one is still blocked.
pub struct Relay {
    /// Closing this end (dropping it) wakes both threads and tells them to stop.
    stop: OwnedFd,
    input: Worker<()>,
    output: Worker<RelayEnd>,
}

impl Relay {
    /// Starts relaying `input` (the user's terminal) to `master`, and `master` to `output`.
    pub fn start(
        master: BorrowedFd<'_>,
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
    ) -> io::Result<Relay> {
        set_nonblocking(master)?;
        let master = Arc::new(master.try_clone_to_owned()?);
        let input = input.try_clone_to_owned()?;
        let output = output.try_clone_to_owned()?;
        let (stop_rx, stop) = pipe()?;
        let stop_rx = Arc::new(stop_rx);

        let (m, s) = (Arc::clone(&master), Arc::clone(&stop_rx));
        let input = Worker::spawn("isolate-pty-in", move || {
            relay_input(input.as_fd(), m.as_fd(), s.as_fd())
        })?;
        let output = Worker::spawn("isolate-pty-out", move || {
            relay_output(master.as_fd(), output.as_fd(), stop_rx.as_fd())
        })?;
        Ok(Relay {
            stop,
            input,
            output,
        })
    }

    /// Waits up to `timeout` for the job's output to be relayed to the end, then stops the
    /// relay: the user's keystrokes are no longer read after this returns. Call it once the
    /// job's tree is gone (and the supervisor's copy of the slave closed): then the end arrives
    /// at once, and the timeout only guards against an output that does not take the rest.
    pub fn finish(self, timeout: Duration) -> RelayEnd {
        let end = self.output.wait(timeout);
        drop(self.stop);
        let _ = self.input.wait(STOP_GRACE);
        end.unwrap_or(RelayEnd::TimedOut)
    }
}

/// A relay thread that reports its result on a channel, so it can be waited for with a timeout.
struct Worker<T> {
    thread: thread::JoinHandle<()>,
    done: mpsc::Receiver<T>,
}

impl<T: Send + 'static> Worker<T> {
    fn spawn(name: &str, work: impl FnOnce() -> T + Send + 'static) -> io::Result<Worker<T>> {
        let (tx, done) = mpsc::sync_channel(1);
        let thread = thread::Builder::new()
            .name(name.into())
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let _ = tx.send(work());
            })?;
        Ok(Worker { thread, done })
    }

    /// The thread's result, if it ends within `timeout`; otherwise the thread is left to end on
    /// its own.
    fn wait(self, timeout: Duration) -> Option<T> {
        let result = self.done.recv_timeout(timeout).ok()?;
        let _ = self.thread.join();
        Some(result)
    }
}

/// User's terminal -> master, until the input ends, the job's side is gone, or `stop`.
fn relay_input(input: BorrowedFd<'_>, master: BorrowedFd<'_>, stop: BorrowedFd<'_>) {
    let mut buf = vec![0u8; BUF_SIZE];
    loop {
        // Wait before reading: a blocking read could not be stopped.
        if !matches!(wait(input, libc::POLLIN, stop), Ok(Wake::Ready)) {
            return;
        }
        let n = match read(input, &mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            // EIO: the user's terminal hung up; the supervisor hears of it by SIGHUP.
            Err(_) => return,
        };
        // An error here is EIO: every holder of the slave is gone. The rest of the input is
        // the job's no more.
        if !matches!(write_all(master, &buf[..n], stop), Ok(Wake::Ready)) {
            return;
        }
    }
}

/// Master -> user's terminal, until every holder of the slave has closed it, or `stop`.
fn relay_output(master: BorrowedFd<'_>, output: BorrowedFd<'_>, stop: BorrowedFd<'_>) -> RelayEnd {
    let mut buf = vec![0u8; BUF_SIZE];
    let mut failed = None;
    loop {
        let n = match read_master(master, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                match wait(master, libc::POLLIN, stop) {
                    Ok(Wake::Ready) => continue,
                    Ok(Wake::Stopped) => return RelayEnd::TimedOut,
                    Err(e) => return RelayEnd::MasterFailed(e),
                }
            }
            Err(e) => return RelayEnd::MasterFailed(e),
        };
        if failed.is_some() {
            continue;
        }
        match write_all(output, &buf[..n], stop) {
            Ok(Wake::Ready) => {}
            Ok(Wake::Stopped) => return RelayEnd::TimedOut,
            Err(e) => failed = Some(e),
        }
    }
    match failed {
        None => RelayEnd::Drained,
        Some(e) => RelayEnd::OutputFailed(e),
    }
}

/// `read` on the master, where the end is EIO on Linux rather than 0: once the last holder of
/// the slave closes it, the master returns what was still buffered, then EIO (pty(7)).
fn read_master(master: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    match read(master, buf) {
        Err(e) if e.raw_os_error() == Some(libc::EIO) => Ok(0),
        other => other,
    }
}

/// What ended a wait.
enum Wake {
    /// The descriptor is ready (or reports an error or hang-up, which the next call returns).
    Ready,
    /// The stop pipe was closed.
    Stopped,
}

/// Waits until `fd` is ready for `events`, or `stop` is closed (which wins).
fn wait(fd: BorrowedFd<'_>, events: libc::c_short, stop: BorrowedFd<'_>) -> io::Result<Wake> {
    let mut fds = [
        libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        },
        libc::pollfd {
            fd: stop.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // SAFETY: poll writes only the `revents` of the two entries.
    retry(|| unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) })?;
    Ok(if fds[1].revents != 0 {
        Wake::Stopped
    } else {
        Wake::Ready
    })
}

/// Writes all of `data` to `fd`, waiting (stoppably) whenever `fd` is non-blocking and full.
fn write_all(fd: BorrowedFd<'_>, mut data: &[u8], stop: BorrowedFd<'_>) -> io::Result<Wake> {
    while !data.is_empty() {
        // SAFETY: write reads at most `data.len()` bytes of `data`.
        match retry(|| unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) }) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n as usize..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Wake::Stopped = wait(fd, libc::POLLOUT, stop)? {
                    return Ok(Wake::Stopped);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Wake::Ready)
}

fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: read writes at most `buf.len()` bytes into `buf`.
    let n = retry(|| unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })?;
    Ok(n as usize)
}

fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we borrow, changing its status flags only.
    let flags = retry(|| unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) })?;
    // SAFETY: as above; F_SETFL changes only the status flags of a descriptor we borrow.
    retry(|| unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
    Ok(())
}

/// A system call's -1 as the error in errno.
fn cvt<T: Copy + PartialOrd + Default>(rc: T) -> io::Result<T> {
    if rc < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// [`cvt`], retried while the call is interrupted by a signal.
fn retry<T: Copy + PartialOrd + Default>(mut call: impl FnMut() -> T) -> io::Result<T> {
    loop {
        match cvt(call()) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    //! Real pseudo-terminals and real processes. The "user" is played through a second pty: its
    //! slave is the user's terminal as the supervisor sees it (stdin and stdout), its master is
    //! the keyboard and the screen.

    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, ExitStatus};
    use std::time::Instant;

    /// Bound of every wait: a hang fails the test instead of hanging it.
    const TIMEOUT: Duration = Duration::from_secs(10);

    /// Starts `sh -c script` on `slave`, as the supervisor will: own session, `slave` as
    /// controlling terminal and standard descriptors.
    fn spawn_on(slave: &OwnedFd, script: &str) -> Child {
        let fd = slave.as_raw_fd();
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        // SAFETY: setsid, ioctl, dup2 and fcntl are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                attach_controlling_terminal(fd)
            });
        }
        cmd.spawn().expect("spawn sh")
    }

    fn wait_child(child: &mut Child) -> ExitStatus {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the job did not end within {TIMEOUT:?}");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Plays the user at `screen`: types `keys` as fast as the terminal takes them and collects
    /// what is shown, until `done` holds. Returns what was shown and how many keys were typed.
    fn exchange(screen: &OwnedFd, keys: &[u8], done: impl Fn(&[u8]) -> bool) -> (Vec<u8>, usize) {
        set_nonblocking(screen.as_fd()).expect("non-blocking screen");
        let deadline = Instant::now() + TIMEOUT;
        let (mut shown, mut typed) = (Vec::new(), 0);
        let mut buf = [0u8; 4096];
        while !done(&shown) {
            assert!(
                Instant::now() < deadline,
                "timed out; typed {typed} bytes, shown: {:?}",
                String::from_utf8_lossy(&shown)
            );
            let mut events = libc::POLLIN;
            if typed < keys.len() {
                events |= libc::POLLOUT;
            }
            let mut pfd = libc::pollfd {
                fd: screen.as_raw_fd(),
                events,
                revents: 0,
            };
            // SAFETY: one pollfd.
            if unsafe { libc::poll(&mut pfd, 1, 100) } <= 0 {
                continue;
            }
            if pfd.revents & libc::POLLIN != 0 {
                match read(screen.as_fd(), &mut buf) {
                    Ok(n) => shown.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("reading the screen: {e}"),
                }
            }
            if pfd.revents & libc::POLLOUT != 0 && typed < keys.len() {
                let rest = &keys[typed..];
                // SAFETY: write reads at most `rest.len()` bytes.
                let n =
                    unsafe { libc::write(screen.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
                if n > 0 {
                    typed += n as usize;
                }
            }
        }
        (shown, typed)
    }

    /// Reads `len` bytes from `fd` (made non-blocking), or what came before the deadline.
    fn read_within(fd: &OwnedFd, len: usize) -> Vec<u8> {
        set_nonblocking(fd.as_fd()).expect("non-blocking");
        let deadline = Instant::now() + TIMEOUT;
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        while got.len() < len && Instant::now() < deadline {
            let mut pfd = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd.
            if unsafe { libc::poll(&mut pfd, 1, 100) } <= 0 {
                continue;
            }
            match read(fd.as_fd(), &mut buf) {
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("read: {e}"),
            }
        }
        got
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn contains(needle: &'static str) -> impl Fn(&[u8]) -> bool {
        move |shown| text(shown).contains(needle)
    }

    fn count(byte: u8, n: usize) -> impl Fn(&[u8]) -> bool {
        move |shown| shown.iter().filter(|&&b| b == byte).count() >= n
    }

    fn set_winsize(master: &OwnedFd, rows: u16, cols: u16) {
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads one winsize.
        retry(|| unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) })
            .expect("TIOCSWINSZ");
    }

    fn fd_path(fd: &OwnedFd) -> String {
        let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
        std::fs::read_link(link)
            .expect("readlink")
            .display()
            .to_string()
    }

    fn status_flags(fd: &OwnedFd) -> libc::c_int {
        // SAFETY: F_GETFL only reads.
        retry(|| unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) }).expect("F_GETFL")
    }

    /// Every field of a termios, comparable and printable (libc's has neither, and its padding
    /// rules out comparing bytes).
    #[derive(Debug, PartialEq, Eq, Clone)]
    struct Settings {
        iflag: libc::tcflag_t,
        oflag: libc::tcflag_t,
        cflag: libc::tcflag_t,
        lflag: libc::tcflag_t,
        line: libc::cc_t,
        cc: Vec<libc::cc_t>,
        ispeed: libc::speed_t,
        ospeed: libc::speed_t,
    }

    fn settings(fd: &OwnedFd) -> Settings {
        let t = get_termios(fd.as_fd()).expect("tcgetattr");
        Settings {
            iflag: t.c_iflag,
            oflag: t.c_oflag,
            cflag: t.c_cflag,
            lflag: t.c_lflag,
            line: t.c_line,
            cc: t.c_cc.to_vec(),
            // SAFETY: the speed getters only read `t`.
            ispeed: unsafe { libc::cfgetispeed(&t) },
            // SAFETY: as for the input speed: the getter only reads `t`.
            ospeed: unsafe { libc::cfgetospeed(&t) },
        }
    }

    /// Settings nothing would produce by default, so that "restored" cannot mean "reset".
    fn unusual_settings(fd: &OwnedFd) {
        let mut t = get_termios(fd.as_fd()).expect("tcgetattr");
        t.c_cc[libc::VERASE] = 0x08;
        t.c_cc[libc::VINTR] = 0x07;
        t.c_lflag &= !libc::ECHOK;
        t.c_iflag |= libc::IXANY;
        // SAFETY: plain setters on a local termios.
        unsafe {
            libc::cfsetispeed(&mut t, libc::B9600);
            libc::cfsetospeed(&mut t, libc::B9600);
        }
        set_termios(fd.as_fd(), libc::TCSANOW, &t).expect("tcsetattr");
    }

    /// A job pty set up from the user's terminal, the job spawned on it, the supervisor's copy
    /// of the slave closed.
    fn start_job(user: &Pty, script: &str) -> (OwnedFd, Child) {
        let job = Pty::open().expect("open job pty");
        job.copy_termios(user.slave.as_fd()).expect("copy termios");
        job.copy_winsize(user.slave.as_fd()).expect("copy winsize");
        let child = spawn_on(&job.slave, script);
        (job.master, child)
    }

    #[test]
    fn open_gives_a_close_on_exec_terminal_pair() {
        let pty = Pty::open().expect("open");
        for fd in [&pty.master, &pty.slave] {
            // SAFETY: F_GETFD and isatty only read.
            let fd_flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
            assert_ne!(fd_flags & libc::FD_CLOEXEC, 0, "close-on-exec");
            // SAFETY: isatty only reads the descriptor's state.
            assert_eq!(unsafe { libc::isatty(fd.as_raw_fd()) }, 1, "a terminal");
        }
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: ptsname_r writes at most `name.len()` bytes, NUL-terminated.
        let rc = unsafe { libc::ptsname_r(pty.master.as_raw_fd(), name.as_mut_ptr(), name.len()) };
        assert_eq!(rc, 0);
        // SAFETY: NUL-terminated by ptsname_r.
        let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
        let path = fd_path(&pty.slave);
        assert!(path.starts_with("/dev/pts/"), "{path}");
        assert_eq!(
            name.to_str().expect("utf-8"),
            path,
            "the slave is the master's peer"
        );
    }

    #[test]
    fn job_gets_its_own_terminal_with_the_users_size_and_input() {
        let user = Pty::open().expect("open user pty");
        set_winsize(&user.master, 37, 111);
        let (master, mut child) = start_job(
            &user,
            "stty size; tty; : </dev/tty && echo ctty:ok; read x; echo got:$x",
        );
        let flags = (status_flags(&user.slave), status_flags(&user.slave));
        let raw = RawMode::enter(user.slave.as_fd()).expect("raw");
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");

        let (shown, _) = exchange(&user.master, b"hello\n", contains("got:hello"));
        assert!(wait_child(&mut child).success());
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
        drop(raw);

        let shown = text(&shown);
        let lines: Vec<&str> = shown.lines().map(|l| l.trim_end_matches('\r')).collect();
        assert!(lines.contains(&"37 111"), "the user's size: {shown:?}");
        assert!(
            lines.contains(&"ctty:ok"),
            "a controlling terminal: {shown:?}"
        );
        let job_tty = lines
            .iter()
            .find(|l| l.starts_with("/dev/pts/"))
            .unwrap_or_else(|| panic!("no tty in {shown:?}"));
        assert_ne!(
            *job_tty,
            fd_path(&user.slave),
            "its own terminal, not the user's"
        );
        assert_eq!(
            (status_flags(&user.slave), status_flags(&user.slave)),
            flags,
            "the user's descriptors keep their flags"
        );
    }

    #[test]
    fn ctrl_c_typed_by_the_user_interrupts_the_job() {
        let user = Pty::open().expect("open user pty");
        let (master, mut child) = start_job(
            &user,
            "trap 'echo caught-int; exit 3' INT; echo ready; while :; do sleep 0.05; done",
        );
        let _raw = RawMode::enter(user.slave.as_fd()).expect("raw");
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");

        exchange(&user.master, b"", contains("ready"));
        // In raw mode ^C is a byte like any other; the job's own terminal turns it into SIGINT
        // for its foreground process group, which TIOCSCTTY made the job's.
        exchange(&user.master, b"\x03", contains("caught-int"));
        assert_eq!(wait_child(&mut child).code(), Some(3));
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
    }

    #[test]
    fn window_size_change_reaches_the_running_job() {
        let user = Pty::open().expect("open user pty");
        let job = Pty::open().expect("open job pty");
        let mut child = spawn_on(
            &job.slave,
            "trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done",
        );
        let Pty { master, slave } = job;
        drop(slave);
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
        exchange(&user.master, b"", contains("ready"));

        // What the supervisor does on SIGWINCH.
        set_winsize(&user.master, 50, 132);
        let resized = Pty {
            master,
            slave: user.slave.try_clone().expect("dup"),
        };
        resized
            .copy_winsize(user.slave.as_fd())
            .expect("copy winsize");
        exchange(&user.master, b"", contains("50 132"));

        child.kill().expect("kill");
        wait_child(&mut child);
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
    }

    #[test]
    fn relay_ends_when_the_job_exits_although_input_stays_open() {
        let user = Pty::open().expect("open user pty");
        let (master, mut child) = start_job(&user, "echo bye");
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
        exchange(&user.master, b"", contains("bye"));
        assert!(wait_child(&mut child).success());

        let started = Instant::now();
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );

        // The user's next keystrokes are the shell's again: nothing of the relay reads them.
        write_all(user.master.as_fd(), b"after\n", user.slave.as_fd()).expect("type");
        assert_eq!(
            read_within(&user.slave, 6),
            b"after\n",
            "all of them, for the shell"
        );
    }

    #[test]
    fn output_written_just_before_the_job_exits_is_relayed_in_full() {
        const SIZE: usize = 300_000;
        let user = Pty::open().expect("open user pty");
        let (master, mut child) = start_job(&user, "head -c 300000 /dev/zero | tr '\\0' a");
        let _raw = RawMode::enter(user.slave.as_fd()).expect("raw");
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
        let (shown, _) = exchange(&user.master, b"", count(b'a', SIZE));
        assert!(wait_child(&mut child).success());
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
        assert_eq!(shown.len(), SIZE, "nothing more, nothing less");
    }

    #[test]
    fn a_job_that_never_reads_its_input_does_not_stall_its_output() {
        const OFFERED: usize = 1 << 20;
        let user = Pty::open().expect("open user pty");
        let job = Pty::open().expect("open job pty");
        // Raw, so that the unread input is kept (a canonical line that is full drops it).
        let raw = make_raw(get_termios(job.slave.as_fd()).expect("tcgetattr"));
        set_termios(job.slave.as_fd(), libc::TCSANOW, &raw).expect("tcsetattr");
        let mut child = spawn_on(
            &job.slave,
            "sleep 0.5; head -c 200000 /dev/zero | tr '\\0' b",
        );
        let Pty { master, slave } = job;
        drop(slave);
        let _raw = RawMode::enter(user.slave.as_fd()).expect("raw");
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");

        let (_, typed) = exchange(&user.master, &vec![b'k'; OFFERED], count(b'b', 200_000));
        assert!(
            typed < OFFERED,
            "the input was blocked all along (typed {typed} bytes)"
        );
        assert!(wait_child(&mut child).success());
        let started = Instant::now();
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn relay_waits_for_every_holder_of_the_slave() {
        let user = Pty::open().expect("open user pty");
        let (master, mut child) =
            start_job(&user, "trap '' HUP; (sleep 0.3; echo late) & echo early");
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
        assert!(wait_child(&mut child).success());
        // The main process is gone, its background child still writes to the terminal.
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
        exchange(&user.master, b"", contains("late"));
    }

    #[test]
    fn finish_times_out_while_the_supervisor_still_holds_the_slave() {
        let user = Pty::open().expect("open user pty");
        let job = Pty::open().expect("open job pty");
        let mut child = spawn_on(&job.slave, "echo done");
        let relay = Relay::start(job.master.as_fd(), user.slave.as_fd(), user.slave.as_fd())
            .expect("relay");
        assert!(wait_child(&mut child).success());
        exchange(&user.master, b"", contains("done"));

        let started = Instant::now();
        let end = relay.finish(Duration::from_millis(300));
        assert!(matches!(end, RelayEnd::TimedOut), "{end:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );

        // Stopped: what the job's terminal shows from now on stays in the master, unread.
        write_all(job.slave.as_fd(), b"later", job.master.as_fd()).expect("write");
        assert_eq!(read_within(&job.master, 5), b"later");
    }

    #[test]
    fn master_reads_what_is_left_then_eio_once_the_slave_is_closed() {
        let pty = Pty::open().expect("open");
        let Pty { master, slave } = pty;
        write_all(slave.as_fd(), b"left", master.as_fd()).expect("write");
        drop(slave);
        let mut buf = [0u8; 16];
        let n = read(master.as_fd(), &mut buf).expect("buffered data first");
        assert_eq!(&buf[..n], b"left");
        let err = read(master.as_fd(), &mut buf).expect_err("then the end");
        assert_eq!(err.raw_os_error(), Some(libc::EIO), "Linux says EIO, not 0");
        assert_eq!(read_master(master.as_fd(), &mut buf).expect("EOF"), 0);
    }

    #[test]
    fn raw_mode_restores_the_exact_settings() {
        let user = Pty::open().expect("open");
        unusual_settings(&user.slave);
        let original = settings(&user.slave);

        let mut raw = RawMode::enter(user.slave.as_fd()).expect("enter");
        let entered = settings(&user.slave);
        assert_eq!(
            entered.lflag & (libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN),
            0
        );
        assert_eq!(entered.iflag & (libc::ICRNL | libc::IXON), 0);
        assert_eq!(entered.oflag & libc::OPOST, 0);
        assert_eq!(entered.cc[libc::VMIN], 1);
        assert_eq!(
            entered.ospeed, original.ospeed,
            "the line itself is left alone"
        );

        raw.suspend().expect("suspend");
        assert_eq!(settings(&user.slave), original, "suspended");
        raw.suspend().expect("suspend twice");
        assert_eq!(settings(&user.slave), original, "suspended twice");
        raw.resume().expect("resume");
        assert_eq!(settings(&user.slave), entered, "resumed");
        raw.resume().expect("resume twice");
        assert_eq!(settings(&user.slave), entered, "resumed twice");
        drop(raw);
        assert_eq!(settings(&user.slave), original, "dropped");
    }

    #[test]
    fn dropping_raw_mode_while_suspended_leaves_the_terminal_alone() {
        let user = Pty::open().expect("open");
        let mut raw = RawMode::enter(user.slave.as_fd()).expect("enter");
        raw.suspend().expect("suspend");
        // The shell changes the settings while the supervisor is stopped.
        unusual_settings(&user.slave);
        let shells = settings(&user.slave);
        drop(raw);
        assert_eq!(settings(&user.slave), shells);
    }

    #[test]
    fn raw_mode_refuses_what_is_not_a_terminal() {
        let (read_end, _write_end) = pipe().expect("pipe");
        let err = RawMode::enter(read_end.as_fd())
            .err()
            .expect("not a terminal");
        assert_eq!(err.raw_os_error(), Some(libc::ENOTTY));
    }

    #[test]
    fn copy_termios_gives_the_job_the_users_settings() {
        let user = Pty::open().expect("open user pty");
        unusual_settings(&user.slave);
        let job = Pty::open().expect("open job pty");
        assert_ne!(settings(&job.slave), settings(&user.slave));
        job.copy_termios(user.slave.as_fd()).expect("copy");
        assert_eq!(settings(&job.slave), settings(&user.slave));
    }

    #[test]
    fn attach_on_descriptor_0_keeps_it_across_exec() {
        // dup2(0, 0) would leave close-on-exec set: the job would start without stdin.
        let job = Pty::open().expect("open");
        let (master, slave) = (job.master, job.slave);
        let fd = slave.as_raw_fd();
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("tty");
        // SAFETY: setsid, dup2, fcntl and ioctl are async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::dup2(fd, 0) < 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::fcntl(0, libc::F_SETFD, libc::FD_CLOEXEC) < 0 {
                    return Err(io::Error::last_os_error());
                }
                attach_controlling_terminal(0)
            });
        }
        let mut child = cmd.spawn().expect("spawn");
        drop(slave);
        let user = Pty::open().expect("open user pty");
        let relay =
            Relay::start(master.as_fd(), user.slave.as_fd(), user.slave.as_fd()).expect("relay");
        assert!(wait_child(&mut child).success(), "stdin is a terminal");
        assert!(matches!(relay.finish(TIMEOUT), RelayEnd::Drained));
        exchange(&user.master, b"", contains("/dev/pts/"));
    }
}
