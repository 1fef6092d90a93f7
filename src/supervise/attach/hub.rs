//! The background supervisor's side of a job with a terminal (`run --bg --tty`): the job's pty,
//! held by the supervisor; the screen kept current in memory (a terminal emulator's model of the
//! last screenful, so an attach shows the screen as it is, not a blank one); the output logged as
//! any background job's; and the attach socket, `jobs/<id>/attach.sock`, through which one client
//! at a time types into the job and sees it. A second attach takes over from the first, which is
//! told. Only a process of this user connects (`SO_PEERCRED`, and the socket's mode); the job
//! cannot, as for every path-named socket outside its sandbox.

use std::fs::File;
use std::io::{self, Read, Write};
use std::num::NonZeroU16;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use nix::unistd::Pid;

use super::wire::{Frame, Frames};
use crate::supervise::interactive::Terminal;
use crate::supervise::pty::{read, set_nonblocking, set_size, Model, Pty, Worker};
use crate::sys::pipe::pipe;

/// The socket's name in the job's directory.
pub const SOCKET: &str = "attach.sock";
/// The size of the job's terminal when the caller's is unknown.
const DEFAULT_SIZE: (u16, u16) = (24, 80);
/// The largest size the job's terminal takes, and its screen is modelled at (32 bytes a cell, so
/// 32 MB a screen): a client that says 65535x65535 would have the model take 137 GB.
const MAX_SIZE: (u16, u16) = (1000, 1000);
/// How long a write to a client may block before that client is dropped.
const CLIENT_WRITE: Duration = Duration::from_secs(2);
/// How long keystrokes may wait for a job that does not read them.
const INPUT_WAIT: Duration = Duration::from_secs(1);
/// What the client that another attach replaced is told.
const TAKEN_OVER: &[u8] = b"\r\n[isolate: attached from another terminal]\r\n";

/// A job's terminal held by its background supervisor.
pub struct Hub {
    master: Arc<OwnedFd>,
    slave: Option<OwnedFd>,
    slave_path: Option<PathBuf>,
    socket: PathBuf,
    listener: Option<UnixListener>,
    size: (u16, u16),
    worker: Option<Worker<()>>,
    stop: Option<OwnedFd>,
}

impl Hub {
    /// A new pty of `size` (rows, columns; the caller's terminal's, else 24x80) and the attach
    /// socket in `job_dir`.
    pub fn open(job_dir: &Path, size: Option<(u16, u16)>) -> io::Result<Hub> {
        let pty = Pty::open()?;
        let size = bounded(size.unwrap_or(DEFAULT_SIZE));
        pty.set_winsize(size.0, size.1)?;
        let socket = job_dir.join(SOCKET);
        let _ = std::fs::remove_file(&socket);
        let listener = UnixListener::bind(&socket)?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        listener.set_nonblocking(true)?;
        let slave_path =
            std::fs::read_link(format!("/proc/self/fd/{}", pty.slave.as_raw_fd())).ok();
        Ok(Hub {
            master: Arc::new(pty.master),
            slave: Some(pty.slave),
            slave_path,
            socket,
            listener: Some(listener),
            size,
            worker: None,
            stop: None,
        })
    }

    /// The job's terminal, for the child to attach between fork and exec.
    pub fn slave_fd(&self) -> Option<RawFd> {
        self.slave.as_ref().map(|s| s.as_raw_fd())
    }

    /// The job's terminal device, which its sandbox may write.
    pub fn slave_path(&self) -> Option<PathBuf> {
        self.slave_path.clone()
    }

    /// Once the job runs: drops the supervisor's copy of the slave (so the job's end reaches the
    /// master) and starts serving: the output into `log` and the screen, attaches on the socket.
    pub fn start(&mut self, log: OwnedFd) -> io::Result<()> {
        self.slave = None;
        let Some(listener) = self.listener.take() else {
            return Ok(());
        };
        let (stop_rx, stop) = pipe()?;
        self.stop = Some(stop);
        let master = Arc::clone(&self.master);
        let size = self.size;
        self.worker = Some(Worker::spawn("isolate-attach", move || {
            let mut serve = Serve::new(master, File::from(log), size);
            serve.run(&listener, stop_rx.as_fd());
        })?);
        Ok(())
    }

    /// After the job's tree is gone: the rest of its output logged, the attached client let go
    /// (it learns of the end from the record), the socket removed.
    pub fn finish(mut self) {
        if let Some(worker) = self.worker.take() {
            if worker.wait(Duration::from_secs(5)).is_none() {
                drop(self.stop.take());
            }
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        drop(self.stop.take());
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl Terminal for Hub {
    /// The job's size follows the attached client, not the supervisor (which has no terminal).
    fn resized(&mut self) {}

    /// Ctrl-Z typed by a client stopped the job: there is no terminal of the supervisor's to give
    /// back, so the job is simply continued.
    fn suspend(&mut self) {}

    fn foreground(&self) -> Option<Pid> {
        // SAFETY: tcgetpgrp only queries the terminal.
        let pgrp = unsafe { libc::tcgetpgrp(self.master.as_raw_fd()) };
        (pgrp > 0).then(|| Pid::from_raw(pgrp))
    }
}

/// The serving thread's state.
struct Serve {
    master: Arc<OwnedFd>,
    log: File,
    screen: Model,
    client: Option<(UnixStream, Frames)>,
}

impl Serve {
    fn new(master: Arc<OwnedFd>, log: File, (rows, cols): (u16, u16)) -> Serve {
        let one = NonZeroU16::MIN;
        Serve {
            master,
            log,
            screen: Model::new(
                NonZeroU16::new(rows).unwrap_or(one),
                NonZeroU16::new(cols).unwrap_or(one),
            ),
            client: None,
        }
    }

    /// Until the job's terminal ends (every holder of the slave closed it) or `stop`.
    fn run(&mut self, listener: &UnixListener, stop: BorrowedFd<'_>) {
        let _ = set_nonblocking(self.master.as_fd());
        let mut buf = vec![0u8; 16 << 10];
        loop {
            let master = Arc::clone(&self.master);
            let client_fd = self.client.as_ref().map(|(s, _)| s.as_fd());
            let mut fds = vec![
                PollFd::new(master.as_fd(), PollFlags::POLLIN),
                PollFd::new(listener.as_fd(), PollFlags::POLLIN),
                PollFd::new(stop, PollFlags::POLLIN),
            ];
            if let Some(fd) = client_fd {
                fds.push(PollFd::new(fd, PollFlags::POLLIN));
            }
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return,
            }
            let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
            let (output, attach, stopped) = (ready(&fds[0]), ready(&fds[1]), ready(&fds[2]));
            let input = fds.get(3).is_some_and(ready);
            drop(fds);
            if stopped {
                return;
            }
            if output && !self.output(&mut buf) {
                self.client = None;
                return;
            }
            if attach {
                self.accept(listener);
            }
            if input {
                self.input(&mut buf);
            }
        }
    }

    /// The job's output: logged, on the screen, to the client. False at the terminal's end.
    fn output(&mut self, buf: &mut [u8]) -> bool {
        loop {
            match read(self.master.as_fd(), buf) {
                Ok(0) => return false,
                Ok(n) => {
                    let bytes = &buf[..n];
                    let _ = self.log.write_all(bytes);
                    self.screen.process(bytes);
                    self.send(bytes);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // EIO: every holder of the slave closed it.
                Err(_) => return false,
            }
        }
    }

    /// A new client, of this user only: the one before it is told and let go; it gets the screen.
    fn accept(&mut self, listener: &UnixListener) {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let own = getsockopt(&stream, PeerCredentials)
            .is_ok_and(|cred| cred.uid() == nix::unistd::geteuid().as_raw());
        if !own || stream.set_nonblocking(false).is_err() {
            return;
        }
        let _ = stream.set_write_timeout(Some(CLIENT_WRITE));
        if let Some((mut old, _)) = self.client.take() {
            let _ = old.write_all(TAKEN_OVER);
        }
        self.client = Some((stream, Frames::default()));
        let screen = self.screen.screen();
        let mut replay = Vec::new();
        if screen.alternate_screen() {
            replay.extend_from_slice(b"\x1b[?1049h");
        }
        replay.extend_from_slice(b"\x1b[H\x1b[2J");
        replay.extend_from_slice(screen.state_formatted().as_bytes());
        self.send(&replay);
    }

    /// What the client sent: keystrokes to the job, sizes to its terminal; its end is a detach.
    fn input(&mut self, buf: &mut [u8]) {
        let Some((stream, frames)) = self.client.as_mut() else {
            return;
        };
        let n = match stream.read(buf) {
            Ok(0) | Err(_) => {
                self.client = None;
                return;
            }
            Ok(n) => n,
        };
        frames.push(&buf[..n]);
        loop {
            let frame = match self.client.as_mut().map(|(_, f)| f.next()) {
                Some(Ok(Some(frame))) => frame,
                Some(Ok(None)) | None => return,
                Some(Err(_)) => {
                    self.client = None;
                    return;
                }
            };
            match frame {
                Frame::Input(bytes) => write_waiting(self.master.as_fd(), &bytes),
                Frame::Resize { rows, cols } if rows > 0 && cols > 0 => {
                    let (rows, cols) = bounded((rows, cols));
                    let _ = set_size(self.master.as_fd(), rows, cols);
                    let one = NonZeroU16::MIN;
                    self.screen.set_size(
                        NonZeroU16::new(rows).unwrap_or(one),
                        NonZeroU16::new(cols).unwrap_or(one),
                    );
                }
                Frame::Resize { .. } => {}
            }
        }
    }

    /// Bytes to the client; one that does not take them in time is let go.
    fn send(&mut self, bytes: &[u8]) {
        if let Some((stream, _)) = self.client.as_mut() {
            if stream.write_all(bytes).is_err() {
                self.client = None;
            }
        }
    }
}

/// `size` (rows, columns) within 1x1 and `MAX_SIZE`.
fn bounded((rows, cols): (u16, u16)) -> (u16, u16) {
    (rows.clamp(1, MAX_SIZE.0), cols.clamp(1, MAX_SIZE.1))
}

/// Writes `bytes` to the (non-blocking) master, waiting at most `INPUT_WAIT` for a job that does
/// not read: what it still does not take is dropped, as a terminal's full input queue would.
fn write_waiting(fd: BorrowedFd<'_>, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: write reads at most `bytes.len()` bytes from `bytes`.
        let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => {
                let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
                let ms = INPUT_WAIT.as_millis() as u16;
                if !matches!(poll(&mut fds, PollTimeout::from(ms)), Ok(n) if n > 0) {
                    return;
                }
            }
            _ => return,
        }
    }
}
