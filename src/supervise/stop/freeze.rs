//! A job's tree held still while isolate is stopped (Ctrl-Z on the job's terminal, or the job
//! stopping its own main process): SIGSTOP to every process of the tree that runs, and SIGCONT to
//! those same processes once isolate is continued. Without it the rest of the tree ran on while
//! the supervisor, stopped, could neither end it nor count its time limit (a job that stopped
//! itself ran past `--timeout` for as long as nobody typed `fg`). A process the job had stopped
//! itself is left as it was.

use std::collections::HashSet;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::Tree;
use crate::sys::process;

/// The most walks of the tree for processes forked while it is being stopped.
const ROUNDS: usize = 16;

/// The processes of a tree this stopped, continued when it is dropped.
pub struct Frozen(HashSet<Pid>);

/// Stops every running process of `tree`, walking it again until a walk finds none not yet
/// stopped (or `ROUNDS` walks).
pub fn freeze(tree: &Tree) -> Frozen {
    let mut stopped = HashSet::new();
    for _ in 0..ROUNDS {
        let running: Vec<Pid> = tree
            .members()
            .into_iter()
            .filter(|pid| !stopped.contains(pid) && !process::stopped(pid.as_raw()))
            .collect();
        if running.is_empty() {
            break;
        }
        for pid in running {
            if kill(pid, Signal::SIGSTOP).is_ok() {
                stopped.insert(pid);
            }
        }
    }
    Frozen(stopped)
}

impl Drop for Frozen {
    fn drop(&mut self) {
        for &pid in &self.0 {
            let _ = kill(pid, Signal::SIGCONT);
        }
    }
}
