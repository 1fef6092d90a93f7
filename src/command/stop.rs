//! `isolate stop JOB [--grace DUR]`: SIGTERM (and SIGCONT) to every process of the job's tree,
//! SIGKILL to what remains after the grace period, then wait for the supervisor to record the end.
//! A queued job's waiter is sent SIGTERM, and records that the job never ran. Stopping a job that
//! has ended is harmless (status 0).

use std::time::Duration;

use crate::cli::StopArgs;
use crate::error::Result;
use crate::job::record::State;
use crate::job::store;
use crate::supervise::stop::{kill_leftovers, stop_tree, stop_waiter};

/// How long the supervisor may take to settle the worktree and write the record after its tree ended.
const SETTLE_LIMIT: Duration = Duration::from_secs(300);
/// How long a supervisor the user suspended is given to come back by itself.
const SUSPENDED_LIMIT: Duration = Duration::from_secs(2);

pub fn run(args: StopArgs) -> Result<i32> {
    let (dir, record) = store::resolve(&store::state_dir()?, &args.job)?;
    match record.effective_state() {
        State::Running => {
            stop_tree(&record, args.grace);
            // A supervisor suspended in the user's shell (an interactive job stopped with Ctrl-Z)
            // records the end once brought back (`fg`): its tree is gone now, which is the stop.
            let suspended = crate::sys::process::stopped(record.supervisor_pid);
            let limit = if suspended {
                SUSPENDED_LIMIT
            } else {
                SETTLE_LIMIT
            };
            // A record that cannot be read any more was settled and forgotten meanwhile: stopped.
            let settled = store::await_end(&dir, Some(limit))
                .map_or(true, |r| r.effective_state() != State::Running);
            if settled {
                return Ok(0);
            }
            if crate::sys::process::stopped(record.supervisor_pid) {
                say!(
                    "isolate: job {} stopped; its isolate is suspended in your shell and records the end \
                     once you bring it back (fg)",
                    record.id
                );
                return Ok(0);
            }
            say!(
                "isolate: job {} stopped, but its supervisor has not recorded the end yet",
                record.id
            );
            Ok(1)
        }
        State::Queued => {
            // Nothing of the job runs yet: its waiter records that it never ran (or, had it just
            // started the job, stops it as its supervisor).
            stop_waiter(&record);
            let settled = store::await_end(&dir, Some(SETTLE_LIMIT))
                .map_or(true, |r| !r.effective_state().live());
            if settled {
                return Ok(0);
            }
            say!(
                "isolate: job {} was asked to stop, but its waiter has not recorded the end yet",
                record.id
            );
            Ok(1)
        }
        State::Lost => {
            kill_leftovers(&record);
            Ok(0)
        }
        _ => Ok(0),
    }
}
