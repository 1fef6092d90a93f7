//! `isolate status JOB [--json]`: one job's command, state, exit, what the sandbox refused it (the
//! seccomp layer's counts, its network proxy's decisions), worktree state and handoff.

use crate::cli::JobArgs;
use crate::command::print_json;
use crate::command::ps::shown;
use crate::controls;
use crate::error::Result;
use crate::job::record::State;
use crate::job::store;

pub fn run(args: JobArgs) -> Result<i32> {
    let (_, record) = store::resolve(&store::state_dir()?, &args.job)?;
    let record = shown(record);
    if args.json {
        return print_json(&record);
    }
    out!("job:      {}", record.id)?;
    // One line each: a newline or a direction override in a name or an argument is shown, so
    // that it cannot forge the lines after it.
    if let Some(name) = &record.name {
        out!("name:     {}", controls::name(name))?;
    }
    out!("command:  {}", controls::name(&record.command.join(" ")))?;
    out!("state:    {}", record.state())?;
    if let Some(status) = record.exit_status() {
        out!("exit:     {status}")?;
    }
    if let Some(queued) = &record.queued_at {
        out!("queued:   {queued}")?;
    }
    if record.state() != State::Queued {
        out!("started:  {}", record.started_at)?;
    }
    if let Some(ended) = &record.ended_at {
        out!("ended:    {ended}")?;
    }
    if let Some(why) = &record.never_ran {
        out!("never ran: {}", controls::name(why))?;
    }
    let sandbox = match record.sandbox.summary() {
        _ if record.state() == State::Queued => "decided when it starts".into(),
        _ if record.never_ran.is_some() => "none: it never ran".into(),
        Some(summary) => summary,
        None => "none (--no-sandbox)".into(),
    };
    out!("sandbox:  {sandbox}")?;
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
            out!("refused:  {}", shown.join(", "))?;
        }
        if let Some(net) = &refused.network {
            let first = match net.first_refused.as_slice() {
                [] => String::new(),
                hosts => format!(" (first: {})", crate::controls::name(&hosts.join(", "))),
            };
            out!(
                "network:  {} allowed, {} refused by the proxy{first}",
                net.allowed,
                net.refused
            )?;
        }
    }
    if let Some(log) = &record.log {
        out!("log:      {log}")?;
    }
    if let Some(wt) = &record.worktree {
        let place = if wt.removed {
            "removed".to_string()
        } else {
            wt.path.clone()
        };
        out!("worktree: {place}")?;
        out!(
            "branch:   {} ({} beyond base)",
            wt.branch,
            crate::words::plural(wt.commits, "commit", "commits")
        )?;
        out!("outcome:  {}", crate::controls::name(&wt.reason))?;
        if !wt.nested_jobs.is_empty() {
            let ids: Vec<String> = wt
                .nested_jobs
                .iter()
                .map(|id| crate::controls::name(id))
                .collect();
            out!("nested:   {}", ids.join(", "))?;
        }
        if let Some(next) = &wt.handoff {
            out!("next:     {next}")?;
        }
    }
    Ok(0)
}
