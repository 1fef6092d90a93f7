//! `isolate run`: prepare (project, id, worktree, plan), start CMD, supervise it to the end, settle
//! the worktree, record and report. Anything that fails before CMD runs undoes what was made and
//! exits 125 (126/127 when CMD cannot be executed or is not found), leaving no job behind.

use std::ffi::OsString;
use std::fs;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Instant, SystemTime};

use crate::cli::RunArgs;
use crate::command::report_error;
use crate::error::{Error, Result};
use crate::job::record::State;
use crate::job::store;
use crate::sandbox::{agent, plan, seed};
use crate::supervise::background::{self, Notify, Role};
use crate::supervise::cgroup::Cgroup;
use crate::supervise::interactive::{self, Interactive};
use crate::supervise::log::{self, Log};
use crate::supervise::ports;
use crate::supervise::proxy::{self, AllowList, Proxy};
use crate::supervise::reaper::{self, Signals};
use crate::supervise::spawn;
use crate::worktree::cleanup;

mod announce;
mod environment;
mod hints;
mod prepare;
mod records;

use announce::{announce_end, announce_start, write_report};
use environment::environment;
use prepare::{prepare, prepare_resume, Prepared, RESUME_LOCK};
use records::{pending_worktree, running_record, timestamp};

pub fn run(args: RunArgs) -> i32 {
    let mut signals = match Signals::install() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let prepared = match &args.resume {
        Some(job) => prepare_resume(job, &args),
        None => prepare(&args),
    };
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    // A stop asked for while the worktree was being made: undo, and end as the signal would have.
    if let Some(sig) = signals.stop_requested() {
        prepared.undo();
        return 128 + sig;
    }
    if !args.bg {
        return execute(args, prepared, &mut signals, None);
    }
    match background::detach(&prepared.job_dir, prepared.id.as_str(), args.json) {
        Ok(Role::Caller(status)) => status,
        Ok(Role::Supervisor(notify)) => execute(args, prepared, &mut signals, Some(notify)),
        Err(e) => {
            prepared.undo();
            fail(&e)
        }
    }
}

fn fail(err: &Error) -> i32 {
    report_error(err);
    err.run_exit_code()
}

/// Starts CMD and supervises it to the end. `notify` is set in a background supervisor: the caller
/// waits on it for the running record, or for the reason CMD could not start.
fn execute(
    args: RunArgs,
    mut prepared: Prepared,
    signals: &mut Signals,
    notify: Option<Notify>,
) -> i32 {
    // The policy's default timeout applies when --timeout is not given (the shorter of two).
    let policies = std::iter::once(&prepared.policy).chain(&prepared.narrowing);
    let timeout = args
        .timeout
        .or(policies.filter_map(|p| p.policy.limits.timeout).min());
    let args = RunArgs { timeout, ..args };
    let not_started = |notify: Option<Notify>, prepared: &Prepared, err: &Error| -> i32 {
        prepared.undo();
        let status = err.run_exit_code();
        match notify {
            Some(n) => n.failed(status, &err.to_string()),
            None => report_error(err),
        }
        status
    };
    let state = match store::state_dir() {
        Ok(s) => s,
        Err(e) => return not_started(notify, &prepared, &e),
    };
    let writable = [prepared.tmpdir.clone()];
    // Readable whatever the policy says (strict): the project the worktree borrows from.
    let readable: Vec<PathBuf> = match &prepared.worktree {
        Some((project, _, _)) => vec![
            project.top.clone(),
            project.caller_top.clone(),
            project.git_dir.clone(),
            project.objects.clone(),
            project.hooks.clone(),
        ],
        None => vec![prepared.cwd.clone()],
    };
    let installation = prepared
        .executable
        .as_deref()
        .map(|exe| agent::installation(exe, std::env::var_os("HOME").as_deref().map(Path::new)))
        .unwrap_or_default();
    let job = plan::Job {
        worktree: prepared
            .worktree
            .as_ref()
            .map(|(_, created, _)| created.path.as_path()),
        writable: &writable,
        readable: &readable,
        allow_write: &args.allow_write,
        installation: &installation,
    };
    if let Err(e) = add_allow_net(&args.allow_net, &mut prepared.policy) {
        return not_started(notify, &prepared, &e);
    }
    let built = match plan::build(&prepared.policy, &job, args.no_sandbox) {
        Ok(built) => built,
        Err(e) => return not_started(notify, &prepared, &e),
    };
    let (mut rules, mut sandbox, mut notes) = (built.rules, built.report, built.notes);
    prepared.made.extend(built.made);
    // The state the job's agent profile carries over, before anything of the job runs.
    let seeds = &prepared.policy.policy.filesystem.seed;
    notes.extend(seed::carry(seeds, &mut prepared.made));
    // `--resume` with another --policy: the job is held to both.
    if let Some(extra) = &prepared.narrowing {
        let built = match plan::build(extra, &job, args.no_sandbox) {
            Ok(built) => built,
            Err(e) => return not_started(notify, &prepared, &e),
        };
        let (more, report, more_notes) = (built.rules, built.report, built.notes);
        prepared.made.extend(built.made);
        rules = match (rules, more) {
            (Some(rules), Some(more)) => Some(rules.narrowed_by(more)),
            (rules, _) => rules,
        };
        sandbox.policy = format!("{} narrowed by {}", sandbox.policy, report.policy);
        sandbox.gaps.push(format!(
            "the gaps above are the job's policy's; policy {} narrows it (what it refuses is refused too)",
            report.policy
        ));
        notes.extend(more_notes);
    }
    let ports = match ports::reserve(&state, prepared.id.as_str()) {
        Ok(block) => block,
        Err(e) => return not_started(notify, &prepared, &e),
    };
    // The network proxy of a domain allowlist, before anything of the job runs (setup included).
    let proxy = match start_proxy(&prepared, rules.as_mut(), ports.first) {
        Ok(proxy) => proxy,
        Err(e) => {
            ports.release();
            return not_started(notify, &prepared, &e);
        }
    };
    let log = if notify.is_some() {
        let path = prepared.job_dir.join("output.log");
        match log::max_from_env().and_then(|max| Log::start(&path, max)) {
            Ok(log) => Some((log, path)),
            Err(e) => {
                ports.release();
                return not_started(notify, &prepared, &e);
            }
        }
    } else {
        None
    };
    let mut terminal = if notify.is_none() && !args.no_pty && interactive::wanted() {
        match Interactive::open() {
            Ok(t) => Some(t),
            Err(e) => {
                ports.release();
                let e = Error::Other(format!("cannot open a terminal for the job: {e}"));
                return not_started(notify, &prepared, &e);
            }
        }
    } else {
        None
    };
    // The job's own terminal is a device it may write and control.
    if let (Some(rules), Some(t)) = (rules.as_mut(), terminal.as_ref()) {
        let paths: Vec<PathBuf> = t.slave_path().into_iter().collect();
        rules.add_devices(&paths);
    }
    let proxy_url = proxy.as_ref().map(Proxy::url);
    let env = environment(&args, &prepared, ports.first, proxy_url.as_deref());
    let cgroup = Cgroup::create(prepared.id.as_str());
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only changes how orphans of this process are re-parented.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
    let worktree = prepared.worktree.as_ref().map(|(project, created, _)| {
        let mut wt = pending_worktree(&created.path, &created.branch, &created.base, &project.top);
        wt.dispatch_dirty = created.dispatch_dirty;
        wt.project_branch = created.project_branch.clone();
        wt
    });
    let mut record = running_record(&args, &prepared, sandbox, worktree);
    record.log = log.as_ref().map(|(_, path)| path.display().to_string());
    record.port = Some(ports.first);
    record.cgroup = cgroup.as_ref().map(|cg| cg.path().display().to_string());
    record.background = notify.is_some();
    // The profile's arguments for its own agent (`[command]`), right after CMD's first word.
    let mut argv = args.command.clone();
    let added = prepared
        .agent
        .as_ref()
        .and_then(|found| prepared.policy.policy.command.get(found.agent.profile));
    if let Some(added) = added.filter(|a| !a.is_empty() && !argv.is_empty()) {
        argv.splice(1..1, added.iter().cloned());
        notes.push(format!(
            "{} runs with {} (its profile's [command])",
            argv[0],
            added.join(" ")
        ));
    }
    // The human line goes out before CMD can print anything; the JSON line needs the pid.
    if !args.json && !args.quiet && notify.is_none() {
        announce_start(&prepared, &record, &notes);
    }
    let clock = Instant::now();
    // On record before anything of the job runs: a supervisor killed before it could write the
    // job's pid leaves a lost job whose record names the cgroup that holds what was started.
    let mut starting = record.clone();
    if let Some(wt) = starting.worktree.as_mut() {
        wt.reason = match prepared.setup {
            Some(_) => "running the project's setup".into(),
            None => "starting".into(),
        };
    }
    let _ = store::write_record(&prepared.job_dir, &starting);
    if let (Some(setup), Some((_, created, _))) = (&prepared.setup, &prepared.worktree) {
        let output = match &log {
            Some((log, _)) => log.writer.try_clone(),
            // CMD's stdout stays CMD's: the setup's output goes to isolate's stderr.
            None => std::io::stderr().as_fd().try_clone_to_owned(),
        };
        let done = output
            .map_err(|e| Error::Other(format!("cannot start the setup command: {e}")))
            .and_then(|output| {
                let cgroup_procs = cgroup.as_ref().and_then(Cgroup::procs_for_child);
                run_setup(
                    setup,
                    &created.path,
                    &env,
                    rules.clone(),
                    output,
                    signals,
                    (args.timeout.unwrap_or(SETUP_LIMIT), args.grace),
                    (cgroup_procs, cgroup.as_ref()),
                )
            });
        if let Err(e) = done {
            ports.release();
            if let Some(cg) = &cgroup {
                cg.remove();
            }
            return not_started(notify, &prepared, &e);
        }
    }
    let (stdin, stdout, stderr) = match &log {
        Some((log, _)) => match (log.writer.try_clone(), log.writer.try_clone()) {
            (Ok(out), Ok(err)) => (Stdio::null(), Stdio::from(out), Stdio::from(err)),
            (Err(e), _) | (_, Err(e)) => {
                ports.release();
                let e = Error::Other(format!("cannot share the log pipe: {e}"));
                return not_started(notify, &prepared, &e);
            }
        },
        None => (Stdio::inherit(), Stdio::inherit(), Stdio::inherit()),
    };
    // What the job could write, for the hint at the end (`None` unsandboxed: everything).
    let writable_paths = rules.as_ref().map(|r| {
        let dirs: Vec<PathBuf> = r.write.iter().chain(&r.worktree).cloned().collect();
        (dirs, r.write_files.clone())
    });
    let starting = spawn::start(spawn::Spawn {
        argv: argv.clone(),
        cwd: prepared.cwd.clone(),
        env,
        rules,
        stdin,
        stdout,
        stderr,
        cgroup_procs: cgroup.as_ref().and_then(Cgroup::procs_for_child),
        terminal: terminal.as_ref().map(Interactive::slave_fd),
    });
    let starting = match starting {
        Ok(starting) => starting,
        Err(e) => {
            ports.release();
            if let Some(cg) = &cgroup {
                cg.remove();
            }
            return not_started(notify, &prepared, &e);
        }
    };
    let pid = starting.pid;
    // The child moved itself into the cgroup before exec; if it could not, the walk stops the tree.
    let cgroup = cgroup.filter(|cg| {
        let inside = cg.contains(pid);
        if !inside {
            cg.remove();
        }
        inside
    });
    record.cgroup = cgroup.as_ref().map(|cg| cg.path().display().to_string());
    record.pid = Some(pid.as_raw());
    // In the foreground the JSON start line, like the human one, comes before anything of CMD.
    if notify.is_none() && args.json {
        if let Ok(line) = serde_json::to_string(&record) {
            say!("{line}");
        }
    }
    let broker = match starting.release() {
        Ok(spawned) => spawned.broker,
        Err(e) => {
            ports.release();
            if let Some(cg) = &cgroup {
                cg.remove();
            }
            return not_started(notify, &prepared, &e);
        }
    };
    if let Err(e) = store::write_record(&prepared.job_dir, &record) {
        report_error(&e);
    }
    if let Some(n) = notify {
        n.started(&record);
    }

    if let Some(t) = terminal.as_mut() {
        if let Err(e) = t.start() {
            say!("isolate: warning: cannot relay the job's terminal: {e}");
        }
    }
    let ending = reaper::supervise(
        pid,
        signals,
        args.timeout,
        args.grace,
        cgroup.as_ref(),
        terminal
            .as_mut()
            .map(|t| t as &mut dyn interactive::Terminal),
    );
    // The user's terminal is theirs again before isolate says anything more.
    drop(terminal);
    if let Some((log, _)) = log {
        log.finish();
    }
    if let Some(cg) = &cgroup {
        cg.remove();
    }
    ports.release();

    record.ended_at = Some(timestamp(SystemTime::now()));
    record.exit = Some(ending.exit());
    record.sandbox.refused = broker.as_ref().map(|b| b.refused());
    if let Some(proxy) = proxy {
        let refused = record.sandbox.refused.get_or_insert_with(Default::default);
        refused.network = Some(proxy.stop());
    }
    record.state = if ending.timed_out() {
        State::TimedOut
    } else if ending.exit().signal.is_some() {
        State::Killed
    } else {
        State::Exited
    };
    if let Some((project, created, key_dir)) = &prepared.worktree {
        let job = cleanup::Job {
            project,
            id: &prepared.id,
            key_dir,
            path: &created.path,
            base: &created.base,
            job_dir: &prepared.job_dir,
            life: cleanup::Life::Ended,
            removed: false,
            settling: cleanup::Settling::End { keep: args.keep },
            dispatch_dirty: created.dispatch_dirty,
            project_branch: created.project_branch.as_deref(),
            policy: Some(&prepared.policy.reference),
        };
        match cleanup::settle(&job) {
            Ok(settled) => record.worktree = Some(settled.report),
            Err(e) => report_error(&e),
        }
    }
    let _ = fs::remove_dir_all(&prepared.tmpdir);
    if let Err(e) = store::write_record(&prepared.job_dir, &record) {
        report_error(&e);
    }
    if prepared.resumed.is_some() {
        let _ = fs::remove_file(prepared.job_dir.join(RESUME_LOCK));
    }
    if let Some(path) = &args.report {
        if let Err(e) = write_report(path, &record) {
            report_error(&e);
        }
    }
    announce_end(&args, &record, clock.elapsed());
    let status = record.exit_status().unwrap_or(125);
    if let (Some((dirs, files)), false) = (&writable_paths, args.json || args.quiet) {
        let writable = hints::Writable { dirs, files };
        let command = args.command.first().map(String::as_str).unwrap_or_default();
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
    status
}

/// `--allow-net`: more names for the policy's allowlist (under a policy without one, with TCP
/// open, the run's allowlist is these). A policy that refuses all TCP (`offline`) stays offline.
fn add_allow_net(names: &[String], loaded: &mut crate::sandbox::policy::Loaded) -> Result<()> {
    use crate::sandbox::policy::{Destination, Ports};
    let net = &mut loaded.policy.network;
    for name in names {
        let destination: Destination = name
            .parse()
            .map_err(|e: String| Error::Usage(format!("--allow-net: {e}")))?;
        if !net.proxied() && net.connect == Ports::Only(Vec::new()) {
            return Err(Error::Usage(format!(
                "--allow-net {name}: policy {} refuses all TCP; choose a policy with network access",
                loaded.name
            )));
        }
        if !net.allow.contains(&destination) {
            net.allow.push(destination);
        }
    }
    Ok(())
}

/// Starts the job's network proxy when its policy (or the one narrowing it) has a domain
/// allowlist, and routes the job's TCP to it (`rules`), with the job's own ports from `first`.
fn start_proxy(
    prepared: &Prepared,
    rules: Option<&mut plan::Rules>,
    first: u16,
) -> Result<Option<Proxy>> {
    let Some(rules) = rules else {
        // --no-sandbox: nothing would hold the job to a proxy.
        return Ok(None);
    };
    let policies = std::iter::once(&prepared.policy).chain(&prepared.narrowing);
    let Some(net) = policies.map(|p| &p.policy.network).find(|n| n.proxied()) else {
        return Ok(None);
    };
    let own: Vec<u16> = (first..first.saturating_add(ports::BLOCK)).collect();
    let allow = AllowList {
        destinations: net.allow.clone(),
        allow_local: net.allow_local,
        own: own.clone(),
        proxy: None,
    };
    let port = proxy::port_from_env()?;
    let proxy = Proxy::start(allow, port, Some(&prepared.job_dir.join(proxy::LOG)))?;
    rules.route_through(proxy.port(), &own);
    Ok(Some(proxy))
}

/// How long the project's setup may run when the job has no `--timeout` (the job's own when it has).
const SETUP_LIMIT: std::time::Duration = std::time::Duration::from_secs(3600);

/// The project's `setup` command (`.isolate.toml`), in the new worktree, sandboxed like the job and
/// with its environment, before CMD. Any failure is isolate's (125): the fresh worktree is undone.
#[allow(clippy::too_many_arguments)]
fn run_setup(
    setup: &str,
    worktree: &Path,
    env: &[(OsString, OsString)],
    rules: Option<plan::Rules>,
    output: std::os::fd::OwnedFd,
    signals: &mut Signals,
    (limit, grace): (std::time::Duration, std::time::Duration),
    (cgroup_procs, cgroup): (Option<std::fs::File>, Option<&Cgroup>),
) -> Result<()> {
    let err = output
        .try_clone()
        .map_err(|e| Error::Other(format!("cannot start the setup command: {e}")))?;
    let pid = spawn::spawn(spawn::Spawn {
        argv: vec!["sh".into(), "-c".into(), setup.to_string()],
        cwd: worktree.to_path_buf(),
        env: env.to_vec(),
        rules,
        stdin: Stdio::null(),
        stdout: Stdio::from(output),
        stderr: Stdio::from(err),
        cgroup_procs,
        terminal: None,
    })
    .map_err(|e| Error::Other(format!("the setup command {setup:?} could not start: {e}")))?
    .pid;
    let ending = reaper::supervise(pid, signals, Some(limit), grace, cgroup, None);
    if ending.timed_out() {
        return Err(Error::Other(format!(
            "the setup command {setup:?} ran longer than {}; the new worktree was removed",
            humantime::format_duration(limit)
        )));
    }
    match ending.exit().status() {
        0 => Ok(()),
        status => Err(Error::Other(format!(
            "the setup command {setup:?} failed with status {status}; the new worktree was removed"
        ))),
    }
}
