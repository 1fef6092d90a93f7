//! The processes isolate starts for itself in a job's sandbox, after or beside the job: git in a
//! job's worktree (`merge`, `sync`) and the import's reading side. Whatever they run may be what
//! the job planted (a hook, an fsmonitor, a filter that daemonizes), so each is supervised like a
//! job: its own session, its own leaf cgroup where one can be made, this process a child subreaper
//! (a daemon that double-forks or calls setsid stays its descendant), a time limit, and the whole
//! tree stopped before `finish` returns. Nothing a helper left behind survives the command that
//! started it.

mod output;
mod wait;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use nix::unistd::Pid;

use crate::error::Result;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::spawn::{self, Spawn, Spawned};
use crate::supervise::stop::{Processes, Stop, Tree};

pub use output::{output, Output};
use wait::{reap_rest, wait};

/// How long the rest of a helper's tree may take to go once it is killed.
const REAP: Duration = Duration::from_secs(5);

/// A helper running.
pub struct Helper {
    spawned: Spawned,
    cgroup: Option<Cgroup>,
}

impl Helper {
    /// Starts `job` (its `cgroup_procs` is the helper's own) as a helper named `what`.
    pub fn start(mut job: Spawn, what: &str) -> Result<Helper> {
        // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only changes how orphans of this process are
        // re-parented.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let cgroup = Cgroup::create(&name);
        job.cgroup_procs = cgroup.as_ref().and_then(Cgroup::procs_for_child);
        let spawned = match spawn::spawn(job) {
            Ok(spawned) => spawned,
            Err(e) => {
                if let Some(cg) = &cgroup {
                    cg.remove();
                }
                return Err(e);
            }
        };
        // The child moved itself in before exec; if it could not, the descendant walk stops it.
        let cgroup = cgroup.filter(|cg| cg.contains(spawned.pid));
        Ok(Helper { spawned, cgroup })
    }

    pub fn pid(&self) -> Pid {
        self.spawned.pid
    }

    /// Waits for the main process at most `limit` (then kills its tree), stops whatever of its tree
    /// is left, and returns its status as a shell reports it (128+N for signal N). Call once every
    /// other child of this process has been waited for: what remains of this process's descendants
    /// is the helper's.
    pub fn finish(self, limit: Duration) -> i32 {
        let pid = self.spawned.pid;
        let status = wait(pid, limit, || self.kill_tree());
        self.kill_tree();
        // Reap what was killed (re-parented here, as the subreaper), for a bounded time.
        reap_rest(REAP);
        if let Some(cg) = &self.cgroup {
            cg.remove();
        }
        status
    }

    /// SIGKILL to the whole tree at once: a helper has no grace period.
    fn kill_tree(&self) {
        let tree = Tree {
            processes: Some(Processes::DescendantsOf(Pid::this())),
            cgroup: self.cgroup.as_ref(),
        };
        Stop::new(Duration::ZERO).round(&tree);
    }
}
