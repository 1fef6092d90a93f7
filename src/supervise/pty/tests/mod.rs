//! Real pseudo-terminals and real processes. The "user" is played through a second pty: its
//! slave is the user's terminal as the supervisor sees it (stdin and stdout), its master is
//! the keyboard and the screen.

mod pair;
mod raw_mode;
mod relay;
mod settings;
mod user;

use super::*;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

use super::direction::read_master;
use super::raw_mode::make_raw;
use super::stoppable::write_all;
use super::syscall::{read, retry, set_nonblocking};
use super::termios::{get_termios, set_termios};
use crate::sys::pipe::pipe;
use settings::{fd_path, set_winsize, settings, status_flags, unusual_settings};
use user::{exchange, read_within};

/// Bound of every wait: a hang fails the test instead of hanging it.
const TIMEOUT: Duration = Duration::from_secs(10);

/// Starts `sh -c script` on `slave`, as the supervisor will: own session, `slave` as
/// controlling terminal and standard descriptors.
fn spawn_on(slave: &OwnedFd, script: &str) -> Child {
    let fd = slave.as_raw_fd();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    // SAFETY: signal, setsid, ioctl, dup2 and fcntl are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            // A runner started in the background without job control ignores SIGINT and SIGQUIT,
            // and a shell cannot trap a signal ignored when it started: the job gets the defaults.
            for sig in [libc::SIGINT, libc::SIGQUIT] {
                libc::signal(sig, libc::SIG_DFL);
            }
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

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn contains(needle: &'static str) -> impl Fn(&[u8]) -> bool {
    move |shown| text(shown).contains(needle)
}

fn count(byte: u8, n: usize) -> impl Fn(&[u8]) -> bool {
    move |shown| shown.iter().filter(|&&b| b == byte).count() >= n
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
