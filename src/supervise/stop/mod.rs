//! The one stop sequence of a job's tree (docs/supervise.md, "Ending"): SIGTERM and SIGCONT once to
//! every process of the tree, ones forked in the meantime included, and once the grace period has
//! passed the cgroup's `cgroup.kill` (where there is one) and SIGKILL to whatever remains. The reaper
//! drives it round by round from its loop; the callers outside a supervisor (`stop`, `rm --force`,
//! `prune`, the background watchdog, a helper's end) use it through `outside.rs`. It only signals:
//! it never waits for a status, which is the reaper's alone (docs/supervise.md, "The process tree").

mod freeze;
mod outside;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::supervise::cgroup::Cgroup;
use crate::supervise::tree;

pub use freeze::{freeze, Frozen};
pub use outside::{kill_leftovers, stop_tree, stop_waiter};

/// Where the processes of a tree are found, besides its cgroup.
#[derive(Debug, Clone, Copy)]
pub enum Processes {
    /// Every descendant of this process (a child subreaper: the supervisor, the watchdog, the
    /// process that started a helper), not the process itself.
    DescendantsOf(Pid),
    /// Every process of this session (a lost job's main process led it).
    Session(i32),
}

/// The processes a stop sequence stops: those `processes` finds and the members of `cgroup`.
pub struct Tree<'a> {
    pub processes: Option<Processes>,
    pub cgroup: Option<&'a Cgroup>,
}

impl Tree<'_> {
    /// Every process of the tree now (never the subreaper it descends from).
    pub fn members(&self) -> Vec<Pid> {
        let mut pids = match self.processes {
            Some(Processes::DescendantsOf(root)) => tree::descendants(root),
            Some(Processes::Session(sid)) => tree::in_session(sid),
            None => Vec::new(),
        };
        pids.extend(self.cgroup.map(Cgroup::pids).unwrap_or_default());
        if let Some(Processes::DescendantsOf(root)) = self.processes {
            pids.retain(|&p| p != root);
        }
        pids
    }
}

/// A stop sequence under way: who has had SIGTERM, and when SIGKILL follows.
pub struct Stop {
    kill_at: Instant,
    termed: HashSet<Pid>,
}

impl Stop {
    /// A stop whose SIGKILL follows `grace` after it begins (`Duration::ZERO`: at once).
    pub fn new(grace: Duration) -> Stop {
        Stop {
            kill_at: Instant::now() + grace,
            termed: HashSet::new(),
        }
    }

    /// One round: within the grace period, SIGTERM (and SIGCONT, so a stopped process can act on
    /// it) once to every process of `tree` that has not had it; after it, `cgroup.kill` and SIGKILL
    /// to all of them. Returns how many processes the tree had.
    pub fn round(&mut self, tree: &Tree) -> usize {
        let pids = tree.members();
        if Instant::now() >= self.kill_at {
            if let Some(cg) = tree.cgroup {
                cg.kill();
            }
            for &pid in &pids {
                // A process that exited in between is fine (ESRCH).
                let _ = kill(pid, Signal::SIGKILL);
            }
            return pids.len();
        }
        for &pid in &pids {
            if self.termed.insert(pid) {
                let _ = kill(pid, Signal::SIGTERM);
                let _ = kill(pid, Signal::SIGCONT);
            }
        }
        pids.len()
    }
}
