//! The supervisor's loop, and the one owner of `waitpid`: it reaps every process of the tree (the
//! supervisor is a child subreaper), records the main process's status itself, forwards SIGINT,
//! SIGQUIT and SIGHUP to the job, runs the stop sequence on SIGTERM and on `--timeout`, and stops
//! whatever is left when the main process exits. It returns only when no process of the tree is left.

mod ending;
mod signals;
mod supervision;

use std::time::{Duration, Instant};

use nix::unistd::Pid;

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
