//! `isolate rm JOB [--force]`: forget an ended job, with the cleanup rule of spec/worktrees.md. A
//! running or lost job, or one whose worktree holds work, is refused (status 1) with the reason. A
//! worktree that holds nothing is removed; the job's branch goes too when the project branch has
//! all of its commits (merged, squash- or rebase-merged), and is kept, with a word saying so, when
//! it does not. `--force` overrides the refusal and nothing else: it stops a running job, and a
//! worktree that holds work stays on disk, untouched, its record kept as a tombstone (`forgotten`)
//! that `worktrees` lists and `prune` settles.

use std::path::Path;
use std::time::Duration;

use crate::cli::RmArgs;
use crate::command::report_error;
use crate::error::Error;
use crate::job::record::{Record, State};
use crate::job::store;
use crate::supervise::stop::{kill_leftovers, stop_tree};
use crate::worktree::cleanup::{self, BranchAction, Recorded, Settling};

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
            match record.worktree.as_ref().filter(|wt| Path::new(&wt.path).exists()) {
                Some(wt) => {
                    let path = wt.path.clone();
                    record.state = State::Lost;
                    tombstone(&state, &dir, record, &path, "lost: its supervisor died")?;
                }
                None => store::forget(&dir),
            }
            return Ok(());
        }
        _ => {}
    }
    let Some(wt) = record.worktree.clone() else {
        store::forget(&dir);
        return Ok(());
    };
    let recorded = match Recorded::open(&state, &record) {
        Ok(recorded) => recorded,
        // Nothing of the job is left on disk to settle (its project moved or is gone).
        Err(e) if wt.removed => {
            store::forget(&dir);
            say!(
                "isolate: forgot job {}; its branch was not settled: {e}",
                record.id
            );
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let settled = cleanup::settle(&recorded.job(Settling::Rm))?;
    if !settled.report.removed {
        if !args.force {
            return Err(Error::Refused(format!(
                "job {}: {} (its worktree is {})",
                record.id, settled.report.reason, settled.report.path
            )));
        }
        let reason = settled.report.reason.clone();
        return tombstone(&state, &dir, record, &settled.report.path, &reason);
    }
    store::forget(&dir);
    if settled.outcome.branch == Some(BranchAction::Keep) {
        let branch = recorded.id.branch();
        let target = wt.project_branch.as_deref().unwrap_or("HEAD");
        say!(
            "isolate: kept branch {branch} ({}): see it with git -C {} log {target}..{branch}",
            settled.outcome.reason,
            crate::controls::shell_quote(&recorded.project.top)
        );
    }
    Ok(())
}

/// The job is forgotten, its worktree left on disk: the record stays as a tombstone that only
/// `worktrees` and `prune` read.
fn tombstone(state: &Path, dir: &Path, record: Record, path: &str, why: &str) -> Result<(), Error> {
    store::bury(state, dir, &record)?;
    say!(
        "isolate: forgot job {}; its worktree stays at {path} ({why}); isolate worktrees lists it as forgotten",
        record.id
    );
    Ok(())
}

/// The record once the supervisor has written the end (bounded).
fn wait_for_end(dir: &Path) -> Result<Record, Error> {
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        let record = store::read_record(dir)?;
        if record.effective_state() != State::Running || std::time::Instant::now() > deadline {
            return Ok(record);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
