//! The job's thread whose call the broker answers, reached without a window for pid reuse: a
//! pidfd of the thread, checked against the pending call when it is opened (so that it is that
//! thread's), then its memory and descriptors through it. Every failure is the errno the job's call
//! returns.
//!
//! Opening a pidfd costs more than the rest of a connect's check, so pidfds are kept by thread id:
//! a kept pidfd whose thread is alive is the thread that now has that id, which is the caller; one
//! whose thread died fails to give a descriptor (ESRCH), and is opened again.

mod access;

use std::collections::HashMap;
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

/// The thread group of a thread, from `/proc/<tid>/status`.
fn tgid(tid: i32) -> Option<i32> {
    let status = std::fs::read_to_string(crate::sys::proc_view::dir(tid).join("status")).ok()?;
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
}
