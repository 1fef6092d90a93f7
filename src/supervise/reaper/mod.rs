//! The supervisor's loop, and the one owner of `waitpid`: it reaps every process of the tree (the
//! supervisor is a child subreaper), records the main process's status itself, forwards SIGINT,
//! SIGQUIT and SIGHUP to the job, runs the stop sequence on SIGTERM and on `--timeout`, and stops
//! whatever is left when the main process exits. It returns only when no process of the tree is left.

mod ending;
mod signals;

use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};

use crate::job::record::Exit;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::interactive::Terminal;
use crate::supervise::stop::{Processes, Stop, Tree};

pub use ending::Ending;
pub use signals::Signals;

/// How often the tree is walked again while stopping, for processes forked in the meantime.
const RESCAN: Duration = Duration::from_millis(50);

/// One job's supervision under way: what the loop knows between its rounds.
struct Supervision<'c, 't> {
    main: Pid,
    tree: Tree<'c>,
    grace: Duration,
    deadline: Option<Instant>,
    exit: Option<Exit>,
    timed_out: bool,
    stopping: Option<Stop>,
    terminal: Option<&'t mut dyn Terminal>,
}

/// Supervises the job whose main process is `main` until nothing of its tree is left.
pub fn supervise(
    main: Pid,
    signals: &mut Signals,
    timeout: Option<Duration>,
    grace: Duration,
    cgroup: Option<&Cgroup>,
    terminal: Option<&mut dyn Terminal>,
) -> Ending {
    let mut job = Supervision {
        main,
        tree: Tree {
            processes: Some(Processes::DescendantsOf(Pid::this())),
            cgroup,
        },
        grace,
        deadline: timeout.map(|t| Instant::now() + t),
        exit: None,
        timed_out: false,
        stopping: None,
        terminal,
    };
    // Reap everything that has ended; an empty tree ends the loop.
    while job.reap() {
        if job.exit.is_some() {
            // The main process is gone: the rest of its tree goes too.
            job.begin_stop();
        }
        let now = Instant::now();
        if let Some(d) = job.deadline {
            if now >= d && !job.timed_out && job.exit.is_none() {
                job.timed_out = true;
                job.begin_stop();
            }
        }
        job.advance();
        let wait = match (&job.stopping, job.deadline) {
            (Some(_), _) => RESCAN,
            (None, Some(d)) => Duration::from_secs(3600).min(d.saturating_duration_since(now)),
            (None, None) => Duration::from_secs(3600),
        };
        for sig in signals.wait(wait) {
            job.on_signal(sig);
        }
    }
    job.ending()
}

impl Supervision<'_, '_> {
    /// Reaps every process of the tree that has ended, recording the main process's status;
    /// false once the tree is empty (ECHILD).
    fn reap(&mut self) -> bool {
        let main = self.main;
        loop {
            match waitpid(
                Pid::from_raw(-1),
                Some(WaitPidFlag::WNOHANG | WaitPidFlag::WUNTRACED),
            ) {
                Ok(WaitStatus::Exited(pid, code)) if pid == main => {
                    self.exit = Some(Exit {
                        code: Some(code),
                        signal: None,
                    })
                }
                Ok(WaitStatus::Signaled(pid, sig, _)) if pid == main => {
                    self.exit = Some(Exit {
                        code: None,
                        signal: Some(sig as i32),
                    })
                }
                // Ctrl-Z on the job's own terminal stopped it: stop isolate too, until `fg`.
                Ok(WaitStatus::Stopped(pid, _)) if pid == main && self.stopping.is_none() => {
                    self.suspend()
                }
                Ok(WaitStatus::StillAlive) => return true,
                Ok(_) => continue,
                Err(Errno::EINTR) => continue,
                Err(_) => return false,
            }
        }
    }

    /// The job stopped on its terminal: give the user theirs, stop isolate, and once continued,
    /// continue the job and its terminal's foreground group.
    fn suspend(&mut self) {
        if let Some(t) = self.terminal.as_deref_mut() {
            t.suspend();
            let _ = kill(Pid::from_raw(-self.main.as_raw()), Signal::SIGCONT);
            if let Some(group) = t.foreground() {
                let _ = kill(Pid::from_raw(-group.as_raw()), Signal::SIGCONT);
            }
        }
    }

    fn begin_stop(&mut self) {
        let grace = self.grace;
        self.stopping.get_or_insert_with(|| Stop::new(grace));
    }

    /// A round of the stop sequence, when one is under way.
    fn advance(&mut self) {
        if let Some(s) = &mut self.stopping {
            s.round(&self.tree);
        }
    }

    fn on_signal(&mut self, sig: i32) {
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

    fn ending(&self) -> Ending {
        // The main process is always reaped before the tree is empty; the fallback is unreachable.
        let exit = self.exit.unwrap_or(Exit {
            code: None,
            signal: Some(libc::SIGKILL),
        });
        match self.timed_out {
            true => Ending::TimedOut(exit),
            false => Ending::Ended(exit),
        }
    }
}
