//! `isolate wait JOB`: blocks until the job ends, then exits with its status (also for a job that
//! ended long ago). A lost job has no status: 1, with the reason.

use std::thread;
use std::time::Duration;

use crate::cli::WaitArgs;
use crate::command::report_error;
use crate::error::Error;
use crate::job::record::State;
use crate::job::store;

const POLL: Duration = Duration::from_millis(20);

pub fn run(args: WaitArgs) -> i32 {
    let found = store::state_dir().and_then(|state| store::resolve(&state, &args.job));
    let (dir, _) = match found {
        Ok(found) => found,
        Err(e) => {
            report_error(&e);
            return 1;
        }
    };
    loop {
        let record = match store::read_record(&dir) {
            Ok(r) => r,
            Err(e) => {
                report_error(&e);
                return 1;
            }
        };
        match record.effective_state() {
            State::Running => thread::sleep(POLL),
            State::Lost => {
                report_error(&Error::Refused(format!(
                    "job {} was lost: its supervisor died without recording an end",
                    record.id
                )));
                return 1;
            }
            _ => return record.exit_status().unwrap_or(1),
        }
    }
}
