//! The job's thread whose call the broker answers, reached without a window for pid reuse: a
//! pidfd of the thread, checked against the pending call when it is opened (so that it is that
//! thread's), then its memory and descriptors through it. Every failure is the errno the job's call
//! returns.
//!
//! Opening a pidfd costs more than the rest of a connect's check, so pidfds are kept by thread id:
//! a kept pidfd whose thread is alive is the thread that now has that id, which is the caller; one
//! whose thread died fails to give a descriptor (ESRCH), and is opened again.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::rc::Rc;

use crate::sandbox::notify::{Call, Listener};
use crate::sys::pidfd::PidFd;

/// `pidfd_open(2)` flag for a thread rather than a thread-group leader (Linux 6.9).
const PIDFD_THREAD: libc::c_uint = libc::O_EXCL as libc::c_uint;

/// Pidfds kept past their calls; past this many the broker starts again.
const KEPT: usize = 128;

pub struct Caller {
    tid: i32,
    pidfd: Rc<PidFd>,
    /// The pidfd was kept from an earlier call (its thread may have died since).
    kept: bool,
}

/// The pidfds of the job's threads the broker has answered.
#[derive(Default)]
pub struct Callers {
    pidfds: HashMap<i32, Rc<PidFd>>,
}

impl Callers {
    /// The thread of `call`; `Err(ENOENT)` when it is gone or no longer waiting.
    pub fn open(&mut self, listener: &Listener, call: &Call) -> Result<Caller, i32> {
        if let Some(pidfd) = self.pidfds.get(&call.tid) {
            return Ok(Caller {
                tid: call.tid,
                pidfd: Rc::clone(pidfd),
                kept: true,
            });
        }
        let caller = Caller::open(listener, call)?;
        if self.pidfds.len() >= KEPT {
            self.pidfds.clear();
        }
        self.pidfds.insert(call.tid, Rc::clone(&caller.pidfd));
        Ok(caller)
    }

    /// Drops the kept pidfd of a thread that died.
    pub fn forget(&mut self, tid: i32) {
        self.pidfds.remove(&tid);
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// The thread group of a thread, from `/proc/<tid>/status`.
fn tgid(tid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()
}

impl Caller {
    /// The thread of `call`, with a new pidfd; `Err(ENOENT)` when it is gone or no longer waiting.
    fn open(listener: &Listener, call: &Call) -> Result<Caller, i32> {
        let pidfd = match PidFd::open(call.tid, PIDFD_THREAD) {
            Ok(fd) => fd,
            // Before Linux 6.9 only a leader has a pidfd: its descriptor table is the thread's
            // unless the thread unshared it, which the job's own code would have to do on purpose.
            Err(libc::EINVAL) => PidFd::open(tgid(call.tid).ok_or(libc::ENOENT)?, 0)?,
            Err(e) => return Err(e),
        };
        if !listener.pending(call) {
            return Err(libc::ENOENT);
        }
        Ok(Caller {
            tid: call.tid,
            pidfd: Rc::new(pidfd),
            kept: false,
        })
    }

    /// The pidfd was kept from an earlier call: an ESRCH from it means its thread died, and the
    /// caller is another thread that got its id.
    pub fn kept(&self) -> bool {
        self.kept
    }

    pub fn tid(&self) -> i32 {
        self.tid
    }

    /// `len` bytes of the caller's memory at `addr` (EFAULT when it is not mapped, as the kernel
    /// says). The caller is blocked in its call; another thread of it may still write there, which
    /// is why what is read is read once and used as read.
    pub fn read(&self, addr: u64, len: usize) -> Result<Vec<u8>, i32> {
        let mut buf = vec![0u8; len];
        if len == 0 {
            return Ok(buf);
        }
        let local = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: len,
        };
        let remote = libc::iovec {
            iov_base: addr as *mut libc::c_void,
            iov_len: len,
        };
        // SAFETY: the local iovec covers `buf`; the remote one is only read by the kernel.
        let n = unsafe { libc::process_vm_readv(self.tid, &local, 1, &remote, 1, 0) };
        if n < 0 {
            return Err(match errno() {
                libc::EFAULT => libc::EFAULT,
                // Not allowed to look (a job process made itself non-dumpable): refuse the call.
                libc::EPERM => libc::EACCES,
                e => e,
            });
        }
        if n as usize != len {
            return Err(libc::EFAULT);
        }
        Ok(buf)
    }

    /// A duplicate of the caller's descriptor `fd`: the very socket it names now, whatever the job
    /// does with the number afterwards.
    pub fn take(&self, fd: u64) -> Result<OwnedFd, i32> {
        let Ok(fd) = i32::try_from(fd) else {
            return Err(libc::EBADF);
        };
        // SAFETY: pidfd_getfd returns a new close-on-exec descriptor or -1.
        let got =
            unsafe { libc::syscall(libc::SYS_pidfd_getfd, self.pidfd.as_fd().as_raw_fd(), fd, 0) };
        if got < 0 {
            return Err(match errno() {
                libc::EPERM => libc::EACCES,
                e => e,
            });
        }
        // SAFETY: a new descriptor nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
    }
}

/// `openat(dir, path, O_PATH)`, following symlinks as a connect does.
pub fn open_path_at(dir: RawFd, path: &CString, flags: libc::c_int) -> Result<OwnedFd, i32> {
    // SAFETY: `path` is a valid C string; openat returns a new descriptor or -1.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
