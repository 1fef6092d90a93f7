//! `isolate wait JOB`: blocks until the job ends, then exits with its status (also for a job that
//! ended long ago). A lost job has no status: 1, with the reason.

use crate::cli::WaitArgs;
use crate::error::{Error, Result};
use crate::job::record::State;
use crate::job::store;

pub fn run(args: WaitArgs) -> Result<i32> {
    let (dir, _) = store::resolve(&store::state_dir()?, &args.job)?;
    let record = store::await_end(&dir, None)?;
    match record.effective_state() {
        State::Lost => Err(Error::Job {
            job: record.id.to_string(),
            why: "was lost: its supervisor died without recording an end".into(),
        }),
        _ => Ok(record.exit_status().unwrap_or(1)),
    }
}
