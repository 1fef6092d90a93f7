//! The job supervised to its end, then settled: its worktree by the cleanup rule, its record
//! written with how it ended and what the sandbox refused, the `--report` file, the end block and
//! a hint where a user would otherwise be stuck. The exit status is the job's.

use std::time::SystemTime;

use crate::job::record::{Record, State};
use crate::supervise::cgroup::Limited;
use crate::supervise::interactive;
use crate::supervise::reaper::{self, Ending, Signals};
use crate::words::timestamp;
use crate::worktree::cleanup;

use super::announce::{announce_end, write_report};
use super::hints;
use super::journal;
use super::launch::Launched;
use super::options::{RunOptions, Speech};
use super::prepared::Prepared;

pub(super) fn supervise_to_end(
    options: &RunOptions,
    prepared: &Prepared,
    launched: Launched,
    signals: &mut Signals,
) -> i32 {
    let Launched {
        mut record,
        pid,
        broker,
        proxy,
        forwards,
        cache_layers,
        log,
        mut terminal,
        mut hub,
        relays,
        ports,
        cgroup,
        limited,
        short_tmp,
        clock,
        writable,
        trusted,
    } = launched;
    if let Some(t) = terminal.as_mut() {
        if let Err(e) = t.start() {
            say!("isolate: warning: cannot relay the job's terminal: {e}");
        }
    }
    if let (Some(h), Some(l)) = (hub.as_mut(), log.as_ref()) {
        let started = l.writer.try_clone().and_then(|writer| h.start(writer));
        if let Err(e) = started {
            say!("isolate: warning: cannot serve the job's terminal: {e}");
        }
    }
    let timeout = prepared.timeout(options.timeout);
    let ending = reaper::supervise(
        pid,
        signals,
        timeout,
        options.grace,
        cgroup.get(),
        match (terminal.as_mut(), hub.as_mut()) {
            (Some(t), _) => Some(t as &mut dyn interactive::Terminal),
            (None, Some(h)) => Some(h as &mut dyn interactive::Terminal),
            (None, None) => None,
        },
    );
    // The user's terminal is theirs again before isolate says anything more, the job's last output
    // on it first.
    drop(terminal);
    for relay in relays {
        relay.finish();
    }
    // The rest of the job's terminal output goes into the log before it is finished.
    if let Some(h) = hub {
        h.finish();
    }
    if let Some(log) = log {
        log.finish();
    }
    // Its memory limit ended it: a state of its own (read before its cgroups go).
    let out_of_memory = limited.as_ref().is_some_and(Limited::out_of_memory);
    drop(cgroup);
    if let Some(limited) = &limited {
        limited.remove();
    }
    drop(ports);
    record.ended_at = Some(timestamp(SystemTime::now()));
    record.sandbox.refused = broker.as_ref().map(|b| b.refused());
    if let Some(proxy) = proxy {
        let refused = record.sandbox.refused.get_or_insert_with(Default::default);
        refused.network = Some(proxy.stop());
    }
    if let Some(forwards) = forwards {
        forwards.stop();
    }
    if let Some(holder) = crate::supervise::namespaces::Holder::current() {
        holder.end();
    }

    ended(&mut record, &ending);
    if out_of_memory && !ending.timed_out() {
        record.set_state(State::OutOfMemory {
            exit: Some(ending.exit()),
        });
    }
    // What `isolate exec` runs in the job ends with it, before its worktree is settled.
    stop_execs(&prepared.job_dir, options.grace);
    // The agent's trust in the worktree goes with the session it was given for: what the job
    // wrote there is not what the user trusted.
    if let Some(failed) = trusted.and_then(|trusted| trusted.run()) {
        if options.speech == Speech::Human {
            say!("isolate: warning: {failed}");
        }
    }
    // Nothing of the job runs any more: what it added to its caches is kept for the project's
    // next jobs.
    if !cache_layers.is_empty() {
        crate::sandbox::caches::publish(&cache_layers, &prepared.job_dir.join("caches"));
    }
    settle(options, prepared, &mut record);
    push(options, prepared, &mut record);
    drop(short_tmp);
    prepared.remove_tmpdir();
    journal::write(prepared, &record);
    prepared.release_resume_lock();
    if let Some(path) = &options.report {
        if let Err(e) = write_report(path, &record) {
            crate::command::report_error(&e);
        }
    }
    announce_end(options.speech, timeout, &record, clock.elapsed());
    let status = record.exit_status().unwrap_or(125);
    if let (Some((dirs, files)), Speech::Human) = (&writable, options.speech) {
        hint(options, prepared, hints::Writable { dirs, files }, status);
    }
    status
}

/// How the job ended, into its record.
fn ended(record: &mut Record, ending: &Ending) {
    record.set_state(State::ended_by(ending.exit(), ending.timed_out()));
}

/// The worktree by the end-of-job rule (`worktree::cleanup`): its outcome goes into the record.
fn settle(options: &RunOptions, prepared: &Prepared, record: &mut Record) {
    let Some(jw) = &prepared.worktree else {
        return;
    };
    let job = cleanup::Job {
        project: &jw.project,
        id: &prepared.id,
        key_dir: &jw.key_dir,
        path: &jw.created.path,
        base: &jw.created.base,
        job_dir: &prepared.job_dir,
        life: cleanup::Life::Ended,
        removed: false,
        settling: cleanup::Settling::End { keep: options.keep },
        dispatch_dirty: jw.created.dispatch_dirty,
        project_branch: jw.created.project_branch.as_deref(),
        pull_request: jw.created.pull_request,
        started_from: jw.created.started_from.as_deref(),
        policy: Some(&prepared.policy.reference),
    };
    match cleanup::settle(&job) {
        Ok(settled) => record.worktree = Some(settled.report),
        Err(e) => crate::command::report_error(&e),
    }
}

/// `--push` (or the configuration's `push`): the job's branch, imported and kept, pushed from the
/// project to the remote with the user's own git and credentials, never from the job's
/// repository. A failure changes nothing here and is said (the record's `worktree.push`).
fn push(options: &RunOptions, prepared: &Prepared, record: &mut Record) {
    let (Some(jw), Some(wt)) = (&prepared.worktree, record.worktree.as_mut()) else {
        return;
    };
    let configured = crate::config::load(Some(&jw.project))
        .ok()
        .and_then(|c| c.config.push)
        .filter(|r| !r.is_empty() && !r.starts_with('-'));
    let Some(remote) = options.push.clone().or(configured) else {
        return;
    };
    if !wt.branch_kept || wt.commits == 0 {
        return;
    }
    let spec = format!("refs/heads/{0}:refs/heads/{0}", wt.branch);
    let pushed = crate::git::run(&jw.project.top, ["push", "--quiet", "--", &remote, &spec]);
    wt.push = Some(crate::job::record::Push {
        remote,
        pushed: pushed.is_ok(),
        error: pushed.err().map(|e| e.to_string()),
    });
}

fn hint(options: &RunOptions, prepared: &Prepared, writable: hints::Writable<'_>, status: i32) {
    let command = options
        .command
        .first()
        .map(String::as_str)
        .unwrap_or_default();
    let policy_name = &prepared.policy.name;
    if let Some(hint) = hints::after(
        command,
        prepared.agent.as_ref(),
        policy_name,
        &writable,
        status,
    ) {
        say!("isolate: hint: {}", crate::controls::name(&hint));
    }
}

/// Stops every command `isolate exec` runs in the job (SIGTERM to its supervisor, which stops its
/// tree) and waits until they are gone, at most `grace` and a few seconds more.
fn stop_execs(job_dir: &std::path::Path, grace: std::time::Duration) {
    let pids = crate::job::execs::live(job_dir);
    if pids.is_empty() {
        return;
    }
    for pid in &pids {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    let limit = grace + std::time::Duration::from_secs(5);
    crate::sys::pidfd::wait_exit(None, limit, std::time::Duration::from_millis(20), || {
        crate::job::execs::live(job_dir).is_empty().then_some(())
    });
}
