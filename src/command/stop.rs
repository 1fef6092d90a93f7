//! `isolate stop JOB [--grace DUR]`: SIGTERM (and SIGCONT) to every process of the job's tree,
//! SIGKILL to what remains after the grace period, then wait for the supervisor to record the end.
//! Stopping a job that has ended is harmless (status 0).

use std::thread;
use std::time::{Duration, Instant};

use crate::cli::StopArgs;
use crate::command::report_error;
use crate::job::record::State;
use crate::job::store;
use crate::supervise::stop::{kill_leftovers, stop_tree};

/// How long the supervisor may take to settle the worktree and write the record after its tree ended.
const SETTLE_LIMIT: Duration = Duration::from_secs(300);

pub fn run(args: StopArgs) -> i32 {
    let found = store::state_dir().and_then(|state| store::resolve(&state, &args.job));
    let (dir, record) = match found {
        Ok(found) => found,
        Err(e) => {
            report_error(&e);
            return 1;
        }
    };
    match record.effective_state() {
        State::Running => {
            stop_tree(&record, args.grace);
            let deadline = Instant::now() + SETTLE_LIMIT;
            while Instant::now() < deadline {
                match store::read_record(&dir) {
                    Ok(r) if r.effective_state() == State::Running => {
                        thread::sleep(Duration::from_millis(20))
                    }
                    _ => return 0,
                }
            }
            say!(
                "isolate: job {} stopped, but its supervisor has not recorded the end yet",
                record.id
            );
            1
        }
        State::Lost => {
            kill_leftovers(&record);
            0
        }
        _ => 0,
    }
}
