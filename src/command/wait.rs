//! `isolate wait JOB… | --all [--json] [--timeout DUR]`: blocks until every job named (with `--all`,
//! every running or queued job of the project this is run in) has ended. With one job it exits with
//! that job's status (also for a job that ended long ago; a lost job has none: 1); with several, 0
//! when every one exited 0, else 1. `--json` prints each job's record as one JSON line as it ends
//! (JSON Lines, the schema of docs/cli.md), in the order they end. After `--timeout` it exits 124,
//! as `timeout` does, printing the records of those still running (`--json`), and leaves them be.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::WaitArgs;
use crate::error::{Error, Result};
use crate::job::record::{Record, State};
use crate::job::{project, store};

/// How often the records are read again.
const POLL: Duration = Duration::from_millis(20);
/// The status of a wait that gave up (as `timeout`).
const TIMED_OUT: i32 = 124;

pub fn run(args: WaitArgs) -> Result<i32> {
    let state = store::state_dir()?;
    let mut waiting: Vec<(PathBuf, String)> = match args.all {
        true => this_projects_running(&state)?,
        false => {
            let mut named = Vec::new();
            for query in &args.jobs {
                let (dir, record) = store::resolve(&state, query)?;
                if !named.iter().any(|(d, _)| d == &dir) {
                    named.push((dir, record.id));
                }
            }
            named
        }
    };
    if waiting.is_empty() {
        if !args.json {
            say!("isolate: no job of this project is running");
        }
        return Ok(0);
    }
    let single = waiting.len() == 1 && !args.all;
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut statuses = Vec::new();
    loop {
        let mut still = Vec::new();
        for (dir, id) in waiting {
            let record = store::await_end(&dir, Some(Duration::ZERO))?;
            if !record.effective_state().live() {
                statuses.push(ended(&record, &id, args.json, single)?);
            } else {
                still.push((dir, id));
            }
        }
        waiting = still;
        if waiting.is_empty() {
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            for (dir, id) in &waiting {
                let record = store::await_end(dir, Some(Duration::ZERO))?;
                match args.json {
                    true => json_line(&record)?,
                    false => say!("isolate: {id} is still {}", record.effective_state()),
                }
            }
            return Ok(TIMED_OUT);
        }
        std::thread::sleep(POLL);
    }
    Ok(match single {
        true => statuses[0],
        false => i32::from(statuses.iter().any(|&s| s != 0)),
    })
}

/// One job that ended: said (or its record printed), and its status (a lost job's is 1, and with
/// a single job it is an error saying why).
fn ended(record: &Record, id: &str, json: bool, single: bool) -> Result<i32> {
    let state = record.effective_state();
    if json {
        json_line(record)?;
    }
    if state == State::Lost {
        if single && !json {
            return Err(Error::Job {
                job: id.to_string(),
                why: "was lost: its supervisor died without recording an end".into(),
            });
        }
        if !json {
            say!("isolate: {id} was lost: its supervisor died without recording an end");
        }
        return Ok(1);
    }
    let status = record.exit_status().unwrap_or(1);
    if !json && !single {
        say!("isolate: {id} {state} (status {status})");
    }
    Ok(status)
}

fn json_line(record: &Record) -> Result<()> {
    let line =
        serde_json::to_string(record).map_err(|e| Error::System("cannot write JSON", e.into()))?;
    out!("{line}")
}

/// The running (and queued) jobs of the project this is run in, oldest first.
fn this_projects_running(state: &std::path::Path) -> Result<Vec<(PathBuf, String)>> {
    let Some(top) = project::here(state)? else {
        return Err(Error::Usage(
            "wait --all waits for the jobs of the project it is run in: run it in a project, or \
             name the jobs"
                .into(),
        ));
    };
    Ok(store::list(state)
        .into_iter()
        .filter(|(_, r)| r.effective_state().live() && project::belongs(r, &top))
        .map(|(dir, r)| (dir, r.id))
        .collect())
}
