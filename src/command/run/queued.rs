//! `run --bg` with a queue: `max_running` in the user's configuration (docs/supervise.md, "The
//! queue"). The caller resolves what the job starts from now (the commit of the caller's HEAD or of
//! `--base REV`, and the project branch), then, under the queue's lock, claims the job's id and
//! directory and either takes a slot, so that the run goes on as without a queue under that id, or
//! writes a `queued` record and detaches a waiter. The waiter tells the caller the job is queued,
//! looks at the queue every 100 ms, and when the job's turn comes marks it running and starts it
//! as any background job; a job that never runs (stopped while queued, or failing when its turn
//! came) ends with a record that says why. Without `max_running` nothing here runs, and no lock is
//! taken.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::config;
use crate::error::{Error, Result};
use crate::job::id::JobId;
use crate::job::queue::{Place, Queue};
use crate::job::record::{Record, State};
use crate::job::store;
use crate::supervise::background::{self, Notify, Role};
use crate::supervise::reaper::Signals;
use crate::words::{precise_timestamp, timestamp};

use super::announce::write_report;
use super::fresh::{self, id_source, ID_ATTEMPTS};
use super::journal;
use super::options::{Mode, RunOptions, Start};
use super::target::{resolve_now, Resolved};

/// How long a waiter sleeps between two looks at the queue (a stop wakes it at once).
const LOOK: Duration = Duration::from_millis(100);

/// Where the queue puts a run.
pub(super) enum Entry {
    /// No queue (no `max_running`, or not a background job): the run goes on as it always did.
    Unqueued,
    /// A resumed background job: it starts at once, and counts (`admit`, once its id is known).
    Admit,
    /// The job takes a slot now, under the id claimed for it.
    Now(Claimed),
    /// The job waits: detach its waiter (`wait`).
    Wait(Box<Waiting>),
}

/// A job's id and directory, claimed under the queue's lock, and what it starts from. Dropped
/// before a `Prepared` took them over, the directory goes, but that of a job that waited, where its
/// waiter records that it never ran.
pub(super) struct Claimed {
    pub(super) id: JobId,
    pub(super) job_dir: PathBuf,
    /// For `--worktree`: what was resolved when the job was queued.
    pub(super) resolved: Option<Resolved>,
    /// When the job entered the queue, for one that waits there.
    pub(super) queued_at: Option<String>,
    handed_over: bool,
}

impl Claimed {
    /// Its id and directory, for the `Prepared` that owns (and undoes) them from now.
    pub(super) fn hand_over(&mut self) -> (JobId, PathBuf) {
        self.handed_over = true;
        (self.id.clone(), self.job_dir.clone())
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        if !self.handed_over && self.queued_at.is_none() {
            let _ = store::forget(&self.job_dir);
        }
    }
}

/// A job that waits in the queue: its claim, its record and its place.
pub(super) struct Waiting {
    claimed: Claimed,
    record: Record,
    place: Place,
    max: usize,
}

/// Puts a run where the queue says. Reads the user's configuration (only the user's `max_running`
/// counts) for background runs alone.
pub(super) fn enter(options: &RunOptions) -> Result<Entry> {
    if options.mode != Mode::Background {
        return Ok(Entry::Unqueued);
    }
    let Some(max) = configured_max()? else {
        return Ok(Entry::Unqueued);
    };
    // Attached at once (`--tty` without `--bg`): someone waits at the terminal; the job starts now.
    let now_or_never = options.tty.is_some_and(|t| t.attach);
    let cwd = std::env::current_dir()
        .map_err(|e| Error::io("cannot read the current directory", ".", e))?;
    let state = store::state_dir()?;
    // What can be found wrong now is said now, not when the job's turn comes.
    let resolved = match &options.start {
        Start::Resume(_) => return Ok(Entry::Admit),
        Start::Worktree { base } => Some(resolve_now(&cwd, &state, base)?),
        Start::Here => {
            fresh::in_place(&cwd, &state)?;
            None
        }
    };
    if let Some(name) = &options.policy {
        crate::sandbox::policy::load(name)?;
    }
    let queue = Queue::lock(&state)?;
    queue.count_every_job()?;
    let now = now_or_never || queue.may_start(None, max);
    let (id, job_dir) = claim_id(options, &state)?;
    let queued_at = (!now).then(|| precise_timestamp(SystemTime::now()));
    let claimed = Claimed {
        id,
        job_dir,
        resolved,
        queued_at,
        handed_over: false,
    };
    let mut record = journal::queued(
        options,
        &claimed.id,
        &cwd,
        match now {
            true => State::Running,
            false => State::Queued,
        },
    );
    record.queued_at = claimed.queued_at.clone();
    if let Err(e) = store::write_record(&claimed.job_dir, &record) {
        let _ = store::forget(&claimed.job_dir);
        return Err(e);
    }
    let place = match queue.enter(claimed.id.as_str()) {
        Ok(place) => place,
        Err(e) => {
            let _ = store::forget(&claimed.job_dir);
            return Err(e);
        }
    };
    Ok(match now {
        true => Entry::Now(claimed),
        false => Entry::Wait(Box::new(Waiting {
            claimed,
            record,
            place,
            max,
        })),
    })
}

/// A resumed background job, about to start: counted from now.
pub(super) fn admit(id: &JobId) -> Result<()> {
    let queue = Queue::lock(&store::state_dir()?)?;
    queue.enter(id.as_str()).map(|_| ())
}

/// The user's `max_running`, if set (the project's is never read: it is the user's machine).
fn configured_max() -> Result<Option<usize>> {
    match config::load(None)?.config.max_running {
        Some(0) => Err(Error::Usage(
            "max_running = 0 in the user's configuration: no job could ever start; set at least 1"
                .into(),
        )),
        max => Ok(max),
    }
}

/// A fresh id, its directory made exclusively (`store::claim`).
fn claim_id(options: &RunOptions, state: &Path) -> Result<(JobId, PathBuf)> {
    let name = id_source(options);
    for _ in 0..ID_ATTEMPTS {
        let id = JobId::generate(&name);
        if let Some(dir) = store::claim(state, &id)? {
            return Ok((id, dir));
        }
    }
    Err(Error::NoFreeId(ID_ATTEMPTS))
}

/// Detaches the waiting job's waiter. In the caller: the status to exit with, once the waiter said
/// the job is queued (0), or why it could not be.
pub(super) fn wait(options: &RunOptions, waiting: Box<Waiting>, signals: &mut Signals) -> i32 {
    let job_dir = waiting.claimed.job_dir.clone();
    let id = waiting.claimed.id.to_string();
    match background::detach(&job_dir, &id, options.speech.json()) {
        Ok(Role::Caller(status)) => status,
        Ok(Role::Supervisor(notify)) => waiter(options, *waiting, notify, signals),
        Err(e) => {
            let _ = store::forget(&job_dir);
            super::fail(&e)
        }
    }
}

/// The waiter: the queued record names it, the caller hears the job is queued, and the job waits
/// for its turn, then starts as any background job (this process its supervisor).
fn waiter(
    options: &RunOptions,
    waiting: Waiting,
    mut notify: Notify,
    signals: &mut Signals,
) -> i32 {
    let Waiting {
        claimed,
        mut record,
        place,
        mut max,
    } = waiting;
    let me = std::process::id() as i32;
    record.supervisor_pid = me;
    record.supervisor_start = crate::sys::process::start_time(me).unwrap_or(0);
    if let Err(e) = store::write_record(&claimed.job_dir, &record) {
        let _ = store::forget(&claimed.job_dir);
        notify.failed(e.run_exit_code(), &e.to_string());
        return 125;
    }
    notify.queued(&record);
    let mut ended = Unrun {
        job_dir: claimed.job_dir.clone(),
        record,
    };
    let state = match store::state_dir() {
        Ok(state) => state,
        Err(e) => return ended.failed(options, &e),
    };
    loop {
        if let Some(signal) = signals.stop_within(LOOK) {
            return ended.never_ran(options, State::Killed { signal }, "stopped while queued");
        }
        // Read again at each look: raising the limit lets more start, removing it lets all.
        if let Ok(now) = configured_max() {
            max = now.unwrap_or(usize::MAX);
        }
        match take_slot(&state, &place, max, &mut ended) {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return ended.failed(options, &e),
        }
    }
    let prepared = match fresh::prepare(options, Some(claimed)) {
        Ok(prepared) => prepared,
        Err(e) => return ended.failed(options, &e),
    };
    // A stop asked for while the worktree was being made: undone, and recorded.
    if let Some(signal) = signals.stop_requested() {
        drop(prepared);
        return ended.never_ran(
            options,
            State::Killed { signal },
            "stopped before it started",
        );
    }
    super::execute(options, prepared, signals, Some(notify), Some(&ended))
}

/// Under the queue's lock: whether the job's turn has come, and if so, its record says `running`
/// (it counts from now) before the lock goes.
fn take_slot(state: &Path, place: &Place, max: usize, ended: &mut Unrun) -> Result<bool> {
    let queue = Queue::lock(state)?;
    if !queue.may_start(Some(place), max) {
        return Ok(false);
    }
    ended.record.set_state(State::Running);
    ended.record.started_at = timestamp(SystemTime::now());
    store::write_record(&ended.job_dir, &ended.record)?;
    Ok(true)
}

/// How a job that waited ends when CMD never runs: its record (the queued one, as it stands) says
/// so, and why.
pub(super) struct Unrun {
    job_dir: PathBuf,
    record: Record,
}

impl Unrun {
    /// It failed to start when its turn came: the status `run` would have exited with.
    pub(super) fn failed(&self, options: &RunOptions, e: &Error) -> i32 {
        let status = e.run_exit_code();
        self.never_ran(options, State::Failed { status }, &e.to_string())
    }

    /// Its record says it ended so, never having run, and why (also in `supervisor.log`, and in
    /// `--report`); the status it ended with.
    pub(super) fn never_ran(&self, options: &RunOptions, state: State, why: &str) -> i32 {
        let mut record = self.record.clone();
        record.set_state(state);
        record.ended_at = Some(timestamp(SystemTime::now()));
        record.never_ran = Some(why.to_string());
        say!("isolate: job {} never ran: {why}", record.id);
        if let Err(e) = store::write_record(&self.job_dir, &record) {
            super::report_error(&e);
        }
        if let Some(path) = &options.report {
            if let Err(e) = write_report(path, &record) {
                super::report_error(&e);
            }
        }
        record.exit_status().unwrap_or(125)
    }
}
