//! `isolate ps [--all] [--json]`: the jobs on record. Fast with thousands of records: it reads the
//! records and `/proc`, and never runs git.

use crate::cli::PsArgs;
use crate::command::print_json;
use crate::error::Result;
use crate::job::record::{Record, State};
use crate::job::{project, store};

/// A row of `ps --json`: the record, and the project it belongs to.
#[derive(serde::Serialize)]
struct Row<'a> {
    #[serde(flatten)]
    record: &'a Record,
    project: std::path::PathBuf,
}

pub fn run(args: PsArgs) -> Result<i32> {
    let state = store::state_dir()?;
    let scope = project::scope(&state, args.all_projects)?;
    let jobs: Vec<Record> = store::list(&state)
        .into_iter()
        // A job whose record says queued or running is listed, lost too when its supervisor is
        // gone: what it left waits for `prune`, `stop` or `rm --force`, which settle it (then
        // `--all` only).
        .filter(|(_, r)| args.all || r.state().live())
        .filter(|(_, r)| project::within(r, scope.as_deref()))
        .map(|(_, record)| shown(record))
        .collect();
    if args.json {
        let rows: Vec<Row> = jobs
            .iter()
            .map(|record| Row {
                record,
                project: project::of(record),
            })
            .collect();
        return print_json(&rows);
    }
    out!(
        "{:<28} {:<9} {:>7} {:>6} {:<10} {:<20} COMMAND",
        "ID",
        "STATE",
        "PID",
        "PORT",
        "SANDBOX",
        "STARTED"
    )?;
    for r in &jobs {
        let sandbox = match r.sandbox.confined_by() {
            // Decided when it starts; one that never ran had none.
            _ if r.state() == State::Queued || r.never_ran.is_some() => "-".to_string(),
            Some(abi) => format!("landlock{abi}"),
            None => "NONE".to_string(),
        };
        let state = match (r.state(), r.exit_status()) {
            (now @ (State::Queued | State::Running | State::Lost), _) => now.to_string(),
            (_, Some(status)) => format!("exit {status}"),
            (_, None) => "ended".to_string(),
        };
        out!(
            "{:<28} {:<9} {:>7} {:>6} {:<10} {:<20} {}",
            r.id,
            state,
            r.pid.map_or("-".into(), |p| p.to_string()),
            r.port.map_or("-".into(), |p| p.to_string()),
            sandbox,
            r.started_at,
            // One line a job: a newline or a direction override in an argument is shown.
            crate::controls::name(&match r.worktree.as_ref().and_then(|wt| wt.pull_request) {
                // The request the job works on, before its command.
                Some(n) => format!("[PR #{n}] {}", r.command.join(" ")),
                None => r.command.join(" "),
            })
        )?;
    }
    Ok(0)
}

/// The record as readers see it: a dead supervisor's `running` (or `queued`) is `lost`.
pub fn shown(mut record: Record) -> Record {
    record.set_state(record.effective_state());
    record
}
