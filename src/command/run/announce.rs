//! What `run` says: the start line, the end block, and the `--report` file.

use std::fs;
use std::path::Path;

use crate::controls::shell_quote;
use crate::error::{Error, Result};
use crate::job::record::{Record, State};
use crate::words::plural;
use crate::worktree::create::Filtered;

use super::options::Speech;
use super::prepared::{Chosen, Prepared};

/// `--report FILE`: atomically for a file path; straight into `/dev/fd/N` or another non-file.
/// Whether the report can be written where `--report` asks, checked before anything of the job is
/// made: a directory, or a directory that is not there or not writable, is found now, not after
/// the job has run (an orchestrator would see its status and no report).
pub(super) fn check_report(path: &Path) -> Result<()> {
    let refuse = |why: String| Err(Error::Usage(format!("--report {}: {why}", path.display())));
    // A descriptor or device named through `/dev` or `/proc` (`/dev/stdout`, `/dev/fd/3`) is
    // written as it is, as `write_report` does: its directory is not the caller's to write.
    if path.starts_with("/dev") || path.starts_with("/proc") {
        return Ok(());
    }
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => return refuse("a directory".into()),
        // A descriptor the caller opened (`/dev/fd/N`), a FIFO: written as it is.
        Ok(m) if !m.is_file() => return Ok(()),
        _ => {}
    }
    // A new or regular file is replaced through a file made beside it.
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match fs::metadata(parent) {
        Ok(m) if !m.is_dir() => refuse(format!("{} is not a directory", parent.display())),
        Ok(_) => match nix::unistd::access(parent, nix::unistd::AccessFlags::W_OK) {
            Ok(()) => Ok(()),
            Err(e) => refuse(format!("cannot write in {}: {e}", parent.display())),
        },
        Err(e) => refuse(format!("{}: {e}", parent.display())),
    }
}

pub(super) fn write_report(path: &Path, record: &Record) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(record)?;
    json.push(b'\n');
    let regular_or_new = fs::metadata(path).map(|m| m.is_file()).unwrap_or(true);
    if regular_or_new && !path.starts_with("/dev") && !path.starts_with("/proc") {
        crate::sys::atomic::write(path, &json)
    } else {
        fs::write(path, &json).map_err(|e| Error::io("cannot write the report", path, e))
    }
}

pub(super) fn announce_start(prepared: &Prepared, record: &Record, notes: &[String]) {
    let why = match (&prepared.chosen, &prepared.agent) {
        (Chosen::Agent, Some(found)) => format!(
            " (the command is {}: {})",
            found.agent.name,
            crate::controls::name(&found.executable.to_string_lossy())
        ),
        (Chosen::Configured, _) => " (the configuration's)".into(),
        (Chosen::Recorded, _) => " (the job's own)".into(),
        _ => String::new(),
    };
    let sandbox = match record.sandbox.summary() {
        Some(summary) => format!("{summary}{why}"),
        None => "UNSANDBOXED (--no-sandbox)".to_string(),
    };
    let place = match prepared.worktree.as_ref().map(|wt| &wt.created) {
        Some(created) => format!(
            "in {} (branch {} at {})",
            created.path.display(),
            created.branch,
            &created.base[..12.min(created.base.len())]
        ),
        None => format!("in {}", prepared.cwd.display()),
    };
    say!("isolate: job {} {place}; {sandbox}", record.id);
    if !record.sandbox.allow_write.is_empty() {
        say!(
            "isolate: writable as asked (--allow-write): {}",
            record.sandbox.allow_write.join(", ")
        );
    }
    for note in notes {
        say!("isolate: note: {note}");
    }
    if let Some(wt) = &prepared.worktree {
        let (project, created) = (&wt.project, &wt.created);
        if created.included.copied > 0 {
            say!(
                "isolate: copied {} named by .worktreeinclude",
                plural(created.included.copied, "file", "files")
            );
        }
        if !created.included.blocked.is_empty() {
            let names: Vec<String> = created
                .included
                .blocked
                .iter()
                .map(|p| crate::controls::name(&p.to_string_lossy()))
                .collect();
            say!(
                "isolate: warning: not copied (named by .worktreeinclude): {}: the worktree has a link \
                 or a file where a directory of that path should be",
                names.join(", ")
            );
        }
        match (created.pull_request, &created.started_from) {
            (Some(n), Some(from)) => say!("isolate: cut from pull request #{n} ({from}, fetched)"),
            (None, Some(from)) => say!("isolate: cut from {from} (fetched: --base fresh)"),
            _ => {}
        }
        match &created.filtered {
            Filtered::Nothing => {}
            Filtered::Written(files) => say!(
                "isolate: the base is only on jobs' branches: the filter drivers of {} ran in the sandbox",
                plural(*files, "file", "files")
            ),
            Filtered::Unfiltered { files, why } => say!(
                "isolate: warning: the base is only on jobs' branches, and the filter drivers of {} \
                 failed in the sandbox ({why}): they are as committed, unfiltered",
                plural(*files, "file", "files")
            ),
        }
        if created.dispatch_dirty {
            say!(
                "isolate: warning: uncommitted changes in {} are not in the worktree",
                project.caller_top.display()
            );
        }
    }
}

/// The end block (`Speech::Human`), or the final report as one JSON line (`Speech::Json`), on
/// stderr; `timeout` is the job's limit.
pub(super) fn announce_end(
    speech: Speech,
    timeout: Option<std::time::Duration>,
    record: &Record,
    took: std::time::Duration,
) {
    match speech {
        Speech::Json => {
            if let Ok(line) = serde_json::to_string(record) {
                say!("{line}");
            }
            return;
        }
        Speech::Quiet => return,
        Speech::Human => {}
    }
    let how = match record.state() {
        State::TimedOut { .. } => format!(
            "timed out (its limit: {})",
            humantime::format_duration(timeout.unwrap_or_default())
        ),
        State::Killed { signal } => {
            format!("was killed by signal {signal} (status {})", 128 + signal)
        }
        State::Exited { code } => format!("exited with status {code}"),
        State::OutOfMemory { .. } => format!(
            "was killed: out of memory, its limit {} (status {})",
            record
                .limits
                .and_then(|l| l.memory)
                .map_or("reached".to_string(), crate::words::size),
            record.exit_status().unwrap_or(137)
        ),
        State::Failed { status } => format!("never ran (status {status})"),
        State::Queued | State::Running | State::Lost => "ended".to_string(),
    };
    let took = std::time::Duration::from_secs(took.as_secs());
    say!(
        "isolate: job {} {how} after {}",
        record.id,
        humantime::format_duration(took)
    );
    end_block(record);
}

/// What the end of a job says after its first line: what the sandbox refused it, then its
/// worktree, outcome, branch and what comes next (also `attach`'s, when the job it shows ends).
pub(crate) fn end_block(record: &Record) {
    for line in refusals(record) {
        say!("  {line}");
    }
    let Some(wt) = &record.worktree else {
        return;
    };
    let place = if wt.removed {
        let ignored = match wt.ignored {
            0 => String::new(),
            n => format!(
                " ({} went with it)",
                plural(n, "ignored entry", "ignored entries")
            ),
        };
        format!("removed{ignored}")
    } else {
        format!("kept at {}", shell_quote(Path::new(&wt.path)))
    };
    say!("  worktree: {place}");
    say!("  outcome:  {}", crate::controls::name(&wt.reason));
    let branch = if wt.branch_kept {
        format!(
            "{} ({} beyond base)",
            wt.branch,
            plural(wt.commits, "commit", "commits")
        )
    } else {
        format!("{} deleted", wt.branch)
    };
    say!("  branch:   {branch}");
    if let Some(push) = &wt.push {
        match (&push.error, push.pushed) {
            (_, true) => say!("  pushed:   {} to {}", wt.branch, push.remote),
            (why, false) => say!(
                "  push:     to {} failed, everything kept: {} (git push {} {})",
                push.remote,
                crate::controls::name(why.as_deref().unwrap_or("no reason given")),
                push.remote,
                wt.branch
            ),
        }
    }
    if let Some(next) = &wt.handoff {
        match wt.pull_request {
            Some(n) => say!("  next:     {next}   (the work on pull request #{n})"),
            None => say!("  next:     {next}"),
        }
        // A plain merge runs the project's tracked hooks (`core.hooksPath = .githooks`) and checks
        // the job's `.gitattributes` out with the user's drivers; isolate's shows the change first
        // and runs nothing of it.
        if wt.removed {
            say!(
                "  or:       isolate merge {}   (shows the change first; runs nothing of it)",
                record.id
            );
        }
    }
}

/// What the sandbox refused the job, a line per kind, in the failing program's terms: each with
/// its count and the first destinations; the proxy's upstream failures apart from its refusals.
pub(super) fn refusals(record: &Record) -> Vec<String> {
    let Some(refused) = &record.sandbox.refused else {
        return Vec::new();
    };
    let id = &record.id;
    let first = |wanted: &dyn Fn(&str) -> bool| {
        let named: Vec<&str> = refused
            .first
            .iter()
            .map(String::as_str)
            .filter(|d| wanted(d))
            .collect();
        match named.is_empty() {
            true => String::new(),
            false => format!(": {}", named.join(", ")),
        }
    };
    let is_unix = |d: &str| d.starts_with('/') || d.starts_with('@') || !d.contains(':');
    let landlock = record.sandbox.tier == Some(crate::job::record::Tier::Landlock);
    let mut lines = Vec::new();
    if let Some(net) = &refused.network {
        if net.refused > 0 {
            let named = match net.first_refused.is_empty() {
                true => String::new(),
                false => format!(": {}", net.first_refused.join(", ")),
            };
            lines.push(format!(
                "network:  {} refused by the allowlist{named} (isolate logs --net {id}; \
                 --allow-net NAME:PORT adds one)",
                plural(net.refused as usize, "request", "requests")
            ));
        }
        if net.failed > 0 {
            lines.push(format!(
                "network:  {} allowed but not reached (a name that does not resolve, a server \
                 that does not answer: isolate logs --net {id})",
                plural(net.failed as usize, "request", "requests")
            ));
        }
    }
    if refused.unix_connect > 0 {
        lines.push(format!(
            "unix:     {} to a socket served outside the job refused{} (Docker, an agent's \
             daemon, your desktop are outside the sandbox; a policy's unix_sockets names one \
             it may reach)",
            plural(refused.unix_connect as usize, "connect", "connects"),
            first(&is_unix)
        ));
    }
    if refused.tcp_connect > 0 {
        lines.push(format!(
            "tcp:      {} refused by the policy{}",
            plural(refused.tcp_connect as usize, "connect", "connects"),
            first(&|d| !is_unix(d))
        ));
    }
    if refused.listen > 0 {
        lines.push(format!(
            "listen:   {} refused (off loopback, or on a port someone else's service holds)",
            plural(refused.listen as usize, "listen", "listens")
        ));
    }
    if refused.ipc > 0 {
        let why = match landlock {
            true => "the Landlock-only tier gives the job no IPC namespace of its own",
            false => "outside an IPC namespace of the job's own",
        };
        lines.push(format!(
            "ipc:      {} of System V IPC or POSIX queues refused (PostgreSQL's shared memory, \
             a message queue): {why}",
            plural(refused.ipc as usize, "call", "calls")
        ));
    }
    if refused.process > 0 {
        lines.push(format!(
            "process:  {} on a process outside the job refused (a signal, its priority, scheduling or \
             affinity)",
            plural(refused.process as usize, "call", "calls")
        ));
    }
    lines
}
