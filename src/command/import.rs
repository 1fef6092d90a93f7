//! `isolate import JOB`: the job's current commits into the project's `isolate/<id>` now, with the
//! verified import of docs/sandbox.md (also while the job runs; the worktree is only read).

use crate::cli::ImportArgs;
use crate::error::{Error, Result};
use crate::job::store;
use crate::words::plural;
use crate::worktree::cleanup::{self, Recorded, Settling};

pub fn run(args: ImportArgs) -> Result<i32> {
    import(&args)?;
    Ok(0)
}

fn import(args: &ImportArgs) -> Result<(), Error> {
    let state = store::state_dir()?;
    let (_, record) = store::resolve(&state, &args.job)?;
    let recorded = Recorded::open(&state, &record)?;
    let path = recorded.checked_path()?;
    if !path.is_dir() {
        return Err(Error::Job {
            job: format!("{}'s", record.id),
            why: format!("worktree is gone ({}); nothing to import", path.display()),
        });
    }
    let commits = cleanup::import_now(&recorded.job(Settling::End { keep: true }))?;
    out!(
        "{}: {} beyond base",
        recorded.id.branch(),
        plural(commits, "commit", "commits")
    )?;
    Ok(())
}
