//! `isolate rm JOB [--force]`: forget an ended job, with the cleanup rule of spec/worktrees.md. A
//! running or lost job, or one whose worktree holds work, is refused (status 1) with the reason.
//! `--force` overrides the refusal and nothing else: it stops a running job and forgets the record,
//! and leaves a worktree that holds work on disk, untouched.

use std::path::Path;
use std::time::Duration;

use crate::cli::RmArgs;
use crate::command::report_error;
use crate::command::stop::{kill_leftovers, stop_tree};
use crate::error::Error;
use crate::job::record::State;
use crate::job::store;
use crate::worktree::cleanup;

/// The grace period of the stop that `rm --force` runs on a running job.
const GRACE: Duration = Duration::from_secs(10);

pub fn run(args: RmArgs) -> i32 {
    match remove(&args) {
        Ok(()) => 0,
        Err(e) => {
            report_error(&e);
            1
        }
    }
}

fn remove(args: &RmArgs) -> Result<(), Error> {
    let state = store::state_dir()?;
    let (dir, mut record) = store::resolve(&state, &args.job)?;
    match record.effective_state() {
        State::Running if !args.force => {
            return Err(Error::Refused(format!(
                "job {} is running (isolate stop {0}, or rm --force to stop and forget it)",
                record.id
            )))
        }
        State::Running => {
            stop_tree(&record, GRACE);
            record = wait_for_end(&dir)?;
        }
        State::Lost if !args.force => {
            return Err(Error::Refused(format!(
                "job {} was lost (its supervisor died); its worktree is untouched; rm --force forgets the record and leaves the worktree",
                record.id
            )))
        }
        State::Lost => {
            kill_leftovers(&record);
            store::forget(&dir);
            if let Some(wt) = record.worktree.as_ref().filter(|wt| Path::new(&wt.path).exists()) {
                say!("isolate: forgot job {}; its worktree stays at {}", record.id, wt.path);
            }
            return Ok(());
        }
        _ => {}
    }
    let kept = record
        .worktree
        .as_ref()
        .is_some_and(|wt| !wt.removed && Path::new(&wt.path).exists());
    if kept {
        let report = cleanup::settle_recorded(&state, &record)?;
        if !report.removed {
            if !args.force {
                return Err(Error::Refused(format!(
                    "job {}: {} (its worktree is {})",
                    record.id, report.reason, report.path
                )));
            }
            say!(
                "isolate: forgot job {}; its worktree stays at {} ({})",
                record.id,
                report.path,
                report.reason
            );
        }
    }
    store::forget(&dir);
    Ok(())
}

/// The record once the supervisor has written the end (bounded).
fn wait_for_end(dir: &Path) -> Result<crate::job::record::Record, Error> {
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        let record = store::read_record(dir)?;
        if record.effective_state() != State::Running || std::time::Instant::now() > deadline {
            return Ok(record);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
