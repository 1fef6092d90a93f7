//! The supervisor's end of the seccomp layer: the notification descriptor the filter's listener
//! returns, and the calls on it (seccomp_unotify(2)): receive a call the filter handed over, check
//! that it is still pending, answer it. Nothing here decides anything (`supervise::broker` does);
//! nothing here ever answers "continue": every answer is a result the supervisor produced itself.

use std::os::fd::{AsRawFd, OwnedFd};

/// A call of the job, waiting for the supervisor's answer.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The kernel's cookie for this call.
    pub id: u64,
    /// The calling thread, in the supervisor's pid namespace.
    pub tid: i32,
    pub nr: i64,
    pub args: [u64; 6],
}

/// What the job's call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The call succeeds with this value.
    Value(i64),
    /// The call fails with this errno.
    Errno(i32),
    /// The kernel makes the call as the caller asked, reading its arguments again: only for a
    /// call whose every outcome the kernel judges itself (the check made before it is an extra
    /// refusal, which a second thread of the caller can race: broker/bind.rs).
    Continue,
}

/// The listener of one job's filter.
pub struct Listener {
    fd: OwnedFd,
}

impl Listener {
    pub fn new(fd: OwnedFd) -> Listener {
        let listener = Listener { fd };
        // Linux 6.6: the job's thread and the supervisor's hand over on the same CPU, halving the
        // cost of a round trip. Older kernels lack it; the layer works the same without.
        const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
        // SAFETY: an ioctl on our own descriptor with a plain integer argument.
        unsafe {
            libc::ioctl(
                listener.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
                SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
            )
        };
        listener
    }

    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// The next call (blocks). `Ok(None)` when the call vanished before it could be read (its
    /// thread was killed): receive again.
    pub fn receive(&self) -> std::io::Result<Option<Call>> {
        // SAFETY: seccomp_notif is plain data; zeroed is what the kernel requires on input.
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the ioctl fills `notif`, which outlives the call.
        let rc = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV as _,
                &mut notif as *mut libc::seccomp_notif,
            )
        };
        if rc == 0 {
            let args = notif.data.args;
            return Ok(Some(Call {
                id: notif.id,
                tid: notif.pid as i32,
                nr: i64::from(notif.data.nr),
                args,
            }));
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::EINTR) => Ok(None),
            _ => Err(err),
        }
    }

    /// Whether `call` is still waiting: its thread is alive and blocked in it, so a pid read from it
    /// has not been reused and memory read from it is the caller's.
    pub fn pending(&self, call: &Call) -> bool {
        let id = call.id;
        // SAFETY: the ioctl only reads the u64.
        let rc = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _,
                &id as *const u64,
            )
        };
        rc == 0
    }

    /// Answers `call` with a descriptor of the supervisor's, copied into the caller: the call
    /// returns its number there (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14). A call whose thread died
    /// meanwhile needs no answer.
    pub fn answer_with_fd(&self, call: &Call, fd: &OwnedFd, cloexec: bool) {
        let addfd = libc::seccomp_notif_addfd {
            id: call.id,
            flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
            srcfd: fd.as_raw_fd() as u32,
            newfd: 0,
            newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
        };
        // SAFETY: the ioctl reads `addfd`, which outlives the call.
        let rc = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_ADDFD as _,
                &addfd as *const libc::seccomp_notif_addfd,
            )
        };
        if rc < 0 {
            // Not taken (a kernel before 5.14): the call fails rather than hang.
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if errno != libc::ENOENT {
                self.answer(call, Answer::Errno(errno));
            }
        }
    }

    /// Answers `call`. A call whose thread died meanwhile needs no answer (ENOENT is ignored).
    pub fn answer(&self, call: &Call, answer: Answer) {
        let (val, error, flags) = match answer {
            Answer::Value(v) => (v, 0, 0),
            Answer::Errno(e) => (0, -e.abs(), 0),
            Answer::Continue => (0, 0, libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32),
        };
        let mut resp = libc::seccomp_notif_resp {
            id: call.id,
            val,
            error,
            flags,
        };
        // SAFETY: the ioctl reads `resp`, which outlives the call.
        unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND as _,
                &mut resp as *mut libc::seccomp_notif_resp,
            )
        };
    }
}
