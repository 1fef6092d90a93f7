//! `isolate run`: the command line resolved (options.rs), the job prepared (a fresh one, fresh.rs;
//! or a kept worktree taken up again, resume.rs), started (launch.rs), supervised to its end and
//! settled (end.rs). What is made before CMD runs is held by values that undo it when dropped
//! (`Prepared`, held.rs), so anything that fails before CMD runs leaves no job behind and exits 125
//! (126/127 when CMD cannot be executed or is not found). With `max_running` configured, a
//! background job goes through the queue first (queued.rs): it takes a slot, or waits for one in
//! a waiter of its own, and one that waited and never ran ends with a record that says why.

use crate::cli::RunArgs;
use crate::command::report_error;
use crate::error::Error;
use crate::supervise::background::{self, Notify, Role};
use crate::supervise::reaper::Signals;

mod allow_write;
mod announce;
mod confine;
mod detect;
mod end;
mod environment;
mod exec;
mod fresh;
mod held;
mod hints;
mod journal;
mod launch;
mod network;
mod options;
mod prepared;
mod queued;
mod resume;
mod resume_lock;
mod setup;
mod target;
mod tier;

pub(crate) use announce::end_block;
pub use exec::exec;
use options::{Mode, RunOptions, Start};
use prepared::Prepared;
use queued::Entry;

pub fn run(args: RunArgs) -> i32 {
    let options = RunOptions::from(args);
    crate::sys::progress::want(options.speech == options::Speech::Human);
    if let Some(path) = &options.report {
        if let Err(e) = announce::check_report(path) {
            return fail(&e);
        }
    }
    let mut signals = match Signals::install() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    // With a queue (`max_running`), a background job takes a slot now or waits for one.
    let (claimed, admit) = match queued::enter(&options) {
        Ok(Entry::Unqueued) => (None, false),
        Ok(Entry::Admit) => (None, true),
        Ok(Entry::Now(claimed)) => (Some(claimed), false),
        Ok(Entry::Wait(waiting)) => return queued::wait(&options, waiting, &mut signals),
        Err(e) => return fail(&e),
    };
    let prepared = match &options.start {
        Start::Resume(job) => resume::prepare_resume(job, &options),
        Start::Here | Start::Worktree { .. } => fresh::prepare(&options, claimed),
    };
    let mut prepared = match prepared {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    if admit {
        if let Err(e) = queued::admit(&prepared.id) {
            return fail(&e);
        }
    }
    // A stop asked for while the worktree was being made: undone (dropped), and the end the
    // signal would have made.
    if let Some(sig) = signals.stop_requested() {
        drop(prepared);
        return 128 + sig;
    }
    if options.mode != Mode::Background {
        return execute(&options, prepared, &mut signals, None, None);
    }
    match background::detach(
        &prepared.job_dir,
        prepared.id.as_str(),
        options.speech.json(),
    ) {
        Ok(Role::Caller(status)) => {
            // The background supervisor, another process, has the job now.
            prepared.disown();
            match options.tty {
                Some(tty) if tty.attach && status == 0 => attach_now(&prepared.job_dir),
                _ => status,
            }
        }
        Ok(Role::Supervisor(notify)) => {
            execute(&options, prepared, &mut signals, Some(notify), None)
        }
        Err(e) => {
            drop(prepared);
            fail(&e)
        }
    }
}

fn fail(err: &Error) -> i32 {
    report_error(err);
    err.run_exit_code()
}

/// Starts CMD and supervises it to the end. `notify` is set in a background supervisor: the caller
/// waits on it for the running record, or for the reason CMD could not start. `unrun` is set for a
/// job that waited in the queue, whose caller has gone: its record says why CMD could not start.
fn execute(
    options: &RunOptions,
    mut prepared: Prepared,
    signals: &mut Signals,
    notify: Option<Notify>,
    unrun: Option<&queued::Unrun>,
) -> i32 {
    match launch::launch(options, &mut prepared, signals, notify.as_ref()) {
        Ok(launched) => {
            prepared.disown();
            if let Some(n) = notify {
                n.started(&launched.record);
            }
            end::supervise_to_end(options, &prepared, launched, signals)
        }
        Err(e) => {
            // Undone before the caller hears: once it has, nothing of the job is left.
            drop(prepared);
            let status = e.run_exit_code();
            match (unrun, notify) {
                (Some(unrun), _) => return unrun.failed(options, &e),
                (None, Some(n)) => n.failed(status, &e.to_string()),
                (None, None) => report_error(&e),
            }
            status
        }
    }
}

/// `--tty` without `--bg`: the job started in the background, attached at once.
fn attach_now(job_dir: &std::path::Path) -> i32 {
    let attached = crate::job::store::read_record(job_dir).and_then(|record| {
        let named = crate::command::attach::DEFAULT_KEY;
        let key = crate::command::attach::detach_key(named)?;
        crate::command::attach::attach_to(job_dir, &record, key, named)
    });
    match attached {
        Ok(status) => status,
        Err(e) => fail(&e),
    }
}
