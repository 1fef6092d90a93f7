//! The steps of one round of the supervisor's loop: reaping (the one `waitpid` of the tree), the
//! job's stop on its terminal (Ctrl-Z), a round of the stop sequence, a signal received, and the
//! ending. No step waits: the loop's only sleep is on the signals' self-pipe.

use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};

use super::{Ending, Supervision};
use crate::job::record::Exit;
use crate::supervise::stop::Stop;

impl Supervision<'_, '_> {
    /// Reaps every process of the tree that has ended, recording the main process's status;
    /// false once the tree is empty (ECHILD).
    pub(super) fn reap(&mut self) -> bool {
        let main = self.main;
        loop {
            match waitpid(
                Pid::from_raw(-1),
                Some(WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED),
            ) {
                Ok(WaitStatus::Exited(pid, code)) if pid == main => {
                    self.exit = Some(Exit::Code(code))
                }
                Ok(WaitStatus::Signaled(pid, sig, _)) if pid == main => {
                    self.exit = Some(Exit::Signal(sig as i32))
                }
                // Ctrl-Z on the job's own terminal stopped it: stop isolate too, until `fg`.
                Ok(WaitStatus::Stopped(pid, _)) if pid == main && self.stopping.is_none() => {
                    self.suspend()
                }
                // A child that is not the job's (the holder of its namespaces) keeps nothing going
                // once the main process and the rest of the tree are gone.
                Ok(WaitStatus::StillAlive) => {
                    return self.exit.is_none() || !self.tree.members().is_empty()
                }
                Ok(_) => continue,
                Err(Errno::EINTR) => continue,
                Err(_) => return false,
            }
        }
    }

    /// The job stopped on its terminal: hold the rest of its tree still (stop/freeze.rs), give the
    /// user theirs, stop isolate, and once continued, continue the tree, the job and its
    /// terminal's foreground group. Where nothing would continue isolate, the job is continued.
    fn suspend(&mut self) {
        // Nobody would continue isolate (its parent does no job control): the job goes on, as
        // under sudo, and stays within its time limit.
        if !crate::sys::process::parent_does_job_control() {
            self.continue_job();
            return;
        }
        if let Some(t) = self.terminal.as_deref_mut() {
            let frozen = crate::supervise::stop::freeze(&self.tree);
            t.suspend();
            drop(frozen);
            self.continue_job();
        }
    }

    /// SIGCONT to the job's main process group and its terminal's foreground group.
    fn continue_job(&self) {
        let _ = kill(Pid::from_raw(-self.main.as_raw()), Signal::SIGCONT);
        if let Some(group) = self.terminal.as_deref().and_then(|t| t.foreground()) {
            let _ = kill(Pid::from_raw(-group.as_raw()), Signal::SIGCONT);
        }
    }

    pub(super) fn begin_stop(&mut self) {
        let grace = self.grace;
        self.stopping.get_or_insert_with(|| Stop::new(grace));
    }

    /// A round of the stop sequence, when one is under way.
    pub(super) fn advance(&mut self) {
        if let Some(s) = &mut self.stopping {
            s.round(&self.tree);
        }
    }

    pub(super) fn on_signal(&mut self, sig: i32) {
        match sig {
            SIGTERM => {
                self.begin_stop();
                self.advance();
            }
            // The user's terminal hung up: in interactive mode that ends the job.
            SIGHUP if self.terminal.is_some() => {
                self.begin_stop();
                self.advance();
            }
            SIGWINCH => {
                if let Some(t) = self.terminal.as_deref_mut() {
                    t.resized();
                }
            }
            SIGINT | SIGQUIT | SIGHUP => {
                if let Ok(signal) = Signal::try_from(sig) {
                    // The job's main process leads its own process group (it called setsid).
                    let _ = kill(Pid::from_raw(-self.main.as_raw()), signal);
                }
            }
            _ => {}
        }
    }

    pub(super) fn ending(&self) -> Ending {
        // The main process is always reaped before the tree is empty; the fallback is unreachable.
        let exit = self.exit.unwrap_or(Exit::Signal(libc::SIGKILL));
        match self.timed_out {
            true => Ending::TimedOut(exit),
            false => Ending::Ended(exit),
        }
    }
}
