//! `isolate status JOB [--json]`: one job's command, state, exit, what the sandbox refused it (the
//! seccomp layer's counts, its network proxy's decisions), worktree state and handoff.

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
    if let Some(refused) = &record.sandbox.refused {
        let layer = [
            (refused.unix_connect, "unix connects"),
            (refused.tcp_connect, "tcp connects"),
            (refused.listen, "listens"),
        ];
        if layer.iter().any(|(n, _)| *n > 0) {
            let shown: Vec<String> = layer
                .iter()
                .map(|(n, what)| format!("{n} {what}"))
                .collect();
            println!("refused:  {}", shown.join(", "));
        }
        if let Some(net) = &refused.network {
            let first = match net.first_refused.as_slice() {
                [] => String::new(),
                hosts => format!(" (first: {})", crate::controls::name(&hosts.join(", "))),
            };
            println!(
                "network:  {} allowed, {} refused by the proxy{first}",
                net.allowed, net.refused
            );
        }
    }
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
