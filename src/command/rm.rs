//! `isolate rm JOB [--force]`: forget an ended job, with the cleanup rule of docs/worktrees.md. A
//! queued, running or lost job, or one whose worktree holds work, is refused (status 1) with the reason. A
//! worktree that holds nothing is removed; the job's branch goes too when the project branch has
//! all of its commits (merged, squash- or rebase-merged), and is kept, with a word saying so, when
//! it does not. `--force` overrides the refusal and nothing else: it stops a running job, and a
//! worktree that holds work stays on disk, untouched, its record kept as a tombstone (`forgotten`)
//! that `worktrees` lists and `prune` settles.

use std::path::Path;
use std::time::Duration;

use crate::cli::RmArgs;
use crate::error::{Error, Result};
use crate::job::record::{Record, State};
use crate::job::store;
use crate::supervise::stop::{kill_leftovers, stop_tree, stop_waiter};
use crate::worktree::cleanup::{self, BranchAction, Recorded, Settling};

/// How long the supervisor of a stopped job may take to settle it and write the end.
const SETTLE_LIMIT: Duration = Duration::from_secs(300);

/// The grace period of the stop that `rm --force` runs on a running job.
const GRACE: Duration = Duration::from_secs(10);

pub fn run(args: RmArgs) -> Result<i32> {
    remove(&args)?;
    Ok(0)
}

fn remove(args: &RmArgs) -> Result<(), Error> {
    let state = store::state_dir()?;
    let (dir, mut record) = store::resolve(&state, &args.job)?;
    if !record.state().live() && record.supervisor_alive() {
        record = supervisor_gone(&dir)?;
    }
    match record.effective_state() {
        State::Running if !args.force => {
            return Err(Error::Job {
 job: record.id.to_string(),
 why: format!("is running (isolate stop {job}, or rm --force to stop and forget it)", job = record.id),
 })
        }
        State::Running => {
            stop_tree(&record, GRACE);
            record = store::await_end(&dir, Some(SETTLE_LIMIT))?;
        }
        State::Queued if !args.force => {
            return Err(Error::Job {
                job: record.id.to_string(),
                why: format!(
                    "is queued (isolate stop {job}, or rm --force to stop and forget it)",
                    job = record.id
                ),
            })
        }
        State::Queued => {
            stop_waiter(&record);
            record = store::await_end(&dir, Some(SETTLE_LIMIT))?;
        }
        State::Lost if !args.force => {
            return Err(Error::Job {
 job: record.id.to_string(),
 why: "was lost (its supervisor died); its worktree is untouched; rm --force forgets the record and leaves the worktree".into(),
 })
        }
        State::Lost => {
            kill_leftovers(&record);
            match record.worktree.as_ref().filter(|wt| Path::new(&wt.path).exists()) {
                Some(wt) => {
                    let path = wt.path.clone();
                    record.set_state(State::Lost);
                    tombstone(&state, &dir, record, &path, "lost: its supervisor died")?;
                }
                None => store::forget(&dir)?,
            }
            return Ok(());
        }
        _ => {}
    }
    let Some(wt) = record.worktree.clone() else {
        store::forget(&dir)?;
        return Ok(());
    };
    let recorded = match Recorded::open(&state, &record) {
        Ok(recorded) => recorded,
        // Nothing of the job is left on disk to settle (its project moved or is gone).
        Err(e) if wt.removed => {
            store::forget(&dir)?;
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
            return Err(Error::Job {
                job: format!("{}:", record.id),
                why: format!(
                    "{} (its worktree is {})",
                    settled.report.reason, settled.report.path
                ),
            });
        }
        let reason = settled.report.reason.clone();
        return tombstone(&state, &dir, record, &settled.report.path, &reason);
    }
    store::forget(&dir)?;
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
/// A record that says the job ended while its supervisor still runs: the supervisor is finishing
/// (a moment after the end is written), or the record was edited while the job runs. Nothing is
/// removed from under a supervisor: the record once it is gone, or a refusal.
fn supervisor_gone(dir: &Path) -> Result<Record, Error> {
    let record = store::await_record(dir, Some(FINISHING_LIMIT), |r| !r.supervisor_alive())?;
    match record.supervisor_alive() {
        false => Ok(record),
        true => Err(Error::Job {
            job: record.id.to_string(),
            why: format!(
                "is recorded as ended, but its supervisor (pid {}) still runs: nothing removed",
                record.supervisor_pid
            ),
        }),
    }
}

/// How long the supervisor of an ended job may take to exit once it has written the end.
const FINISHING_LIMIT: Duration = Duration::from_secs(10);

fn tombstone(state: &Path, dir: &Path, record: Record, path: &str, why: &str) -> Result<(), Error> {
    store::bury(state, dir, &record)?;
    say!(
        "isolate: forgot job {}; its worktree stays at {path} ({why}); isolate worktrees lists it as forgotten",
        record.id
    );
    Ok(())
}
