//! `isolate wait JOB`: blocks until the job ends, then exits with its status (also for a job that
//! ended long ago). A lost job has no status: 1, with the reason.

use std::thread;
use std::time::Duration;

use crate::cli::WaitArgs;
use crate::error::{Error, Result};
use crate::job::record::State;
use crate::job::store;

const POLL: Duration = Duration::from_millis(20);

pub fn run(args: WaitArgs) -> Result<i32> {
    let (dir, _) = store::resolve(&store::state_dir()?, &args.job)?;
    loop {
        let record = store::read_record(&dir)?;
        match record.effective_state() {
            State::Running => thread::sleep(POLL),
            State::Lost => {
                return Err(Error::Refused(format!(
                    "job {} was lost: its supervisor died without recording an end",
                    record.id
                )))
            }
            _ => return Ok(record.exit_status().unwrap_or(1)),
        }
    }
}
