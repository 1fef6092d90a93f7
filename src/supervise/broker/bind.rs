//! bind(2), made for the job. A filter sees a pointer, never the address: to judge it, the broker
//! reads it once, and then must make the call itself (answering `CONTINUE` would let another
//! thread of the job swap in another address after the check). An abstract unix name is refused
//! where the policy scopes abstract sockets (the default): it has no owner, and an outside process that connects to a well-known one (`@/tmp/.X11-unix/X0`,
//! a daemon's) would reach the job's server, which Landlock's abstract scope does not stop (it
//! refuses the job's connects out, not others' in). Every other bind is made on a thread of the
//! broker's restricted as the job is (sandbox/exec/as_job.rs), in the caller's working directory
//! and with its umask, so that the kernel judges it as the job's own: Landlock's `MAKE_SOCK` and TCP
//! bind rules, the permissions of an unprivileged process.
//!
//! A nested job's binds are its outer job's to make, under the outer rules only: the nested job
//! makes no unix socket but pairs, and its TCP is open or none (`Sockets::unnestable`), so no rule
//! of its own is skipped.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::mpsc;

use super::caller::Caller;
use crate::sandbox::exec::restrict_thread_as_job;
use crate::sandbox::notify::Answer;
use crate::sandbox::plan::Rules;

/// `sizeof(sa_family_t)`: an `AF_UNIX` address this long asks the kernel for a name of its own
/// choosing (autobind), which nobody outside can know in advance.
const FAMILY: usize = 2;

/// One bind for the restricted thread to make.
pub(super) struct Request {
    socket: OwnedFd,
    cwd: OwnedFd,
    umask: libc::mode_t,
    addr: Vec<u8>,
    done: mpsc::SyncSender<Answer>,
}

/// The thread that makes the job's binds, started at the first (most jobs make none): `Waiting`
/// for it with the rules to restrict it to, `Ready` once it runs, `Refusing` when it could not be
/// restricted (or there is nothing to restrict it to), and then every bind is refused.
pub(super) enum Binder {
    Waiting(Box<Rules>),
    Ready(mpsc::Sender<Request>),
    Refusing,
}

impl Binder {
    /// A binder for a job under `rules`; without rules it makes no bind.
    pub(super) fn new(rules: Option<Rules>) -> Binder {
        rules.map_or(Binder::Refusing, |rules| Binder::Waiting(Box::new(rules)))
    }

    /// Its thread, started if it was not, restricted as the job is.
    fn thread(&mut self) -> Option<&mpsc::Sender<Request>> {
        if let Binder::Waiting(rules) = self {
            *self = match start((**rules).clone()) {
                Some(requests) => Binder::Ready(requests),
                None => Binder::Refusing,
            };
        }
        match self {
            Binder::Ready(requests) => Some(requests),
            _ => None,
        }
    }

    /// The answer to the caller's `bind` of `socket` (of `family`) to `addr`; abstract names
    /// refused where the policy scopes abstract unix sockets (one that lets the job reach
    /// others' lets others reach the job's too).
    pub(super) fn bind(
        &mut self,
        caller: &Caller,
        socket: &OwnedFd,
        (family, addr): (i32, &[u8]),
        scoped: bool,
    ) -> Answer {
        let abstract_name = addr.len() > FAMILY && addr[FAMILY] == 0;
        if family == libc::AF_UNIX && abstract_name && scoped {
            return Answer::Errno(libc::EACCES);
        }
        let Some(requests) = self.thread() else {
            return Answer::Errno(libc::EACCES);
        };
        let (Ok(socket), Ok(cwd)) = (socket.try_clone(), working_directory(caller.tid())) else {
            return Answer::Errno(libc::EAGAIN);
        };
        let (done, answered) = mpsc::sync_channel(1);
        let request = Request {
            socket,
            cwd,
            umask: umask_of(caller.tid()).unwrap_or(0o022),
            addr: addr.to_vec(),
            done,
        };
        if requests.send(request).is_err() {
            return Answer::Errno(libc::EACCES);
        }
        answered.recv().unwrap_or(Answer::Errno(libc::EACCES))
    }
}

/// The thread that makes the binds, restricted as the job under `rules` is, and where to send
/// them; `None` when it could not be restricted.
fn start(rules: Rules) -> Option<mpsc::Sender<Request>> {
    let (requests, arrive) = mpsc::channel::<Request>();
    let (ready, restricted) = mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("isolate-bind".into())
        .spawn(move || {
            let ok = restrict_thread_as_job(&rules).is_ok();
            let _ = ready.send(ok);
            if !ok {
                return;
            }
            for request in arrive {
                let answer = make(&request);
                // The copies closed before the answer: once answered, the job may close its
                // socket and bind the address again.
                let Request {
                    socket, cwd, done, ..
                } = request;
                drop((socket, cwd));
                let _ = done.send(answer);
            }
        })
        .ok()?;
    restricted.recv().ok()?.then_some(requests)
}

/// The caller thread's working directory, as a path descriptor.
fn working_directory(tid: i32) -> std::io::Result<OwnedFd> {
    let path = CString::new(format!("/proc/{tid}/cwd")).map_err(std::io::Error::other)?;
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
    // SAFETY: open of a NUL-terminated path; the descriptor returned is owned from here on.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The caller thread's umask, from its status.
fn umask_of(tid: i32) -> Option<libc::mode_t> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Umask:"))?;
    libc::mode_t::from_str_radix(line.trim(), 8).ok()
}

/// The bind, on the restricted thread: in the caller's directory, with its umask.
fn make(request: &Request) -> Answer {
    // SAFETY: fchdir, umask and bind on descriptors and a buffer this request owns; the
    // directory and umask are this thread's own (unshared).
    unsafe {
        if libc::fchdir(request.cwd.as_raw_fd()) != 0 {
            return Answer::Errno(errno());
        }
        libc::umask(request.umask);
        let rc = libc::bind(
            request.socket.as_raw_fd(),
            request.addr.as_ptr().cast(),
            request.addr.len() as libc::socklen_t,
        );
        if rc == 0 {
            Answer::Value(0)
        } else {
            Answer::Errno(errno())
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}
