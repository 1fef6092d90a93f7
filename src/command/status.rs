//! `isolate status JOB [--json]`: one job's command, state, exit, worktree state and handoff.

use crate::cli::JobArgs;
use crate::command::ps::shown;
use crate::command::{print_json, report_error};
use crate::job::store;

pub fn run(args: JobArgs) -> i32 {
    let found = store::state_dir().and_then(|state| store::resolve(&state, &args.job));
    let record = match found {
        Ok((_, record)) => shown(record),
        Err(e) => {
            report_error(&e);
            return 1;
        }
    };
    if args.json {
        return print_json(&record);
    }
    println!("job:      {}", record.id);
    if let Some(name) = &record.name {
        println!("name:     {name}");
    }
    println!("command:  {}", record.command.join(" "));
    println!(
        "state:    {}",
        serde_json::to_string(&record.state)
            .unwrap_or_default()
            .trim_matches('"')
    );
    if let Some(status) = record.exit_status() {
        println!("exit:     {status}");
    }
    println!("started:  {}", record.started_at);
    if let Some(ended) = &record.ended_at {
        println!("ended:    {ended}");
    }
    let sandbox = match (record.sandbox.enforced, record.sandbox.landlock_abi) {
        (true, Some(abi)) => format!("landlock ABI {abi}, policy {}", record.sandbox.policy),
        _ => "none (--no-sandbox)".into(),
    };
    println!("sandbox:  {sandbox}");
    if let Some(log) = &record.log {
        println!("log:      {log}");
    }
    if let Some(wt) = &record.worktree {
        let place = if wt.removed {
            "removed".to_string()
        } else {
            wt.path.clone()
        };
        println!("worktree: {place}");
        println!(
            "branch:   {} ({} commits beyond base)",
            wt.branch, wt.commits
        );
        println!("outcome:  {}", crate::controls::name(&wt.reason));
        if let Some(next) = &wt.handoff {
            println!("next:     {next}");
        }
    }
    0
}
