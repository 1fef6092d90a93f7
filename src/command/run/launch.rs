//! Starting the job: its sandbox built, its ports, proxy, log or terminal and cgroup taken, its
//! record written before anything of it runs, the project's setup run, then CMD started and
//! released. Whatever fails on the way is undone by the values that hold it (`held.rs`,
//! `Prepared`); nothing here releases anything by hand.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::job::record::{Record, WorktreeReport};
use crate::job::store;
use crate::sandbox::agent::trust::{self, Places, Trust, Withdraw};
use crate::sandbox::caches::Layer;
use crate::sandbox::plan;
use crate::supervise::attach::Hub;
use crate::supervise::background::Notify;
use crate::supervise::broker::Broker;
use crate::supervise::cgroup::Limited;
use crate::supervise::forward::Forwards;
use crate::supervise::interactive::{self, Interactive};
use crate::supervise::log::{self, Log};
use crate::supervise::proxy::Proxy;
use crate::supervise::reaper::Signals;
use crate::supervise::relay::{self, Relay};
use crate::supervise::spawn::{self, Stdio};
use crate::worktree::checked_out;

use super::announce::announce_start;
use super::confine::confine;
use super::environment::{environment, removed_secrets, Made};
use super::held::{JobCgroup, Ports, ShortTmp};
use super::journal::{self, pending_worktree};
use super::network::{named_local, start_proxy};
use super::options::{Mode, RunOptions, Speech};
use super::prepared::Prepared;
use super::setup::{run_setup, Setup};
use super::tier::enter_tier;

/// A job whose CMD runs: what its supervision and its end need.
pub(super) struct Launched {
    pub(super) record: Record,
    pub(super) pid: nix::unistd::Pid,
    pub(super) broker: Option<Broker>,
    pub(super) proxy: Option<Proxy>,
    /// The forwarders of a job in its own network namespace.
    pub(super) forwards: Option<Forwards>,
    /// The job's own layers of its overlaid caches, published at its end.
    pub(super) cache_layers: Vec<Layer>,
    pub(super) log: Option<Log>,
    pub(super) terminal: Option<Interactive>,
    /// `--tty`: the job's terminal held here, for attaches.
    pub(super) hub: Option<Hub>,
    /// Headless: the output streams that are the user's terminal, relayed.
    pub(super) relays: Vec<Relay>,
    pub(super) ports: Ports,
    pub(super) cgroup: JobCgroup,
    /// How the job's limits are enforced, when it has any.
    pub(super) limited: Option<Limited>,
    /// The job's TMPDIR's short name, removed with the job.
    pub(super) short_tmp: ShortTmp,
    pub(super) clock: Instant,
    /// What the job could write, for the hint at the end (`None` unsandboxed: everything).
    pub(super) writable: Option<(Vec<PathBuf>, Vec<PathBuf>)>,
    /// The worktree's trust written into the agent's state, taken back at the end.
    pub(super) trusted: Option<Withdraw>,
}

/// What the job holds before anything of it runs.
struct Holding {
    rules: Option<plan::Rules>,
    notes: Vec<String>,
    ports: Ports,
    proxy: Option<Proxy>,
    forwards: Option<Forwards>,
    cache_layers: Vec<Layer>,
    log: Option<Log>,
    terminal: Option<Interactive>,
    hub: Option<Hub>,
    cgroup: JobCgroup,
    limited: Option<Limited>,
    short_tmp: ShortTmp,
    env: Vec<(OsString, OsString)>,
    record: Record,
}

pub(super) fn launch(
    options: &RunOptions,
    prepared: &mut Prepared,
    signals: &mut Signals,
    notify: Option<&Notify>,
) -> Result<Launched> {
    let mut held = hold(options, prepared, notify)?;
    let trust = trust_worktree(prepared, &held.env);
    for (key, value) in trust.env {
        held.env.retain(|(k, _)| k.as_os_str() != key.as_str());
        held.env.push((key.into(), value));
    }
    held.notes.extend(trust.note);
    let argv = argv(options, prepared, trust.args, &mut held.notes);
    // The human line goes out before CMD can print anything; the JSON line needs the pid.
    if options.speech == Speech::Human && notify.is_none() {
        announce_start(prepared, &held.record, &held.notes);
    }
    // Nothing of the job's (its setup neither) may change a file before the checkout's noted end.
    if let Some(jw) = &prepared.worktree {
        checked_out::settle(&prepared.job_dir, jw.created.checked_out);
    }
    let clock = Instant::now();
    journal::starting(prepared, &held.record);
    if let (Some(command), Some(jw)) = (&prepared.setup, &prepared.worktree) {
        if let Some(log) = held.log.as_mut() {
            log.start()?;
        }
        let setup = Setup {
            command,
            worktree: &jw.created.path,
            env: &held.env,
            rules: held.rules.clone(),
            log: held.log.as_ref(),
            timeout: prepared.timeout(options.timeout),
            grace: options.grace,
            cgroup: held.cgroup.get(),
            limited: held.limited.as_ref(),
        };
        run_setup(setup, signals)?;
    }
    let headless = options.mode == (Mode::Foreground { pty: true })
        && held.terminal.is_none()
        && held.hub.is_none();
    let (stdin, stdout, stderr, mut relays) = stdio(held.log.as_ref(), headless)?;
    let writable = held.rules.as_ref().map(|r| {
        let dirs: Vec<PathBuf> = r.write.iter().chain(&r.worktree).cloned().collect();
        (dirs, r.write_files.clone())
    });
    let starting = spawn::start(spawn::Spawn {
        argv,
        cwd: prepared.cwd.clone(),
        env: held.env,
        rules: held.rules,
        stdin,
        stdout,
        stderr,
        cgroup_procs: held.cgroup.get().and_then(|cg| cg.procs_for_child()),
        limit_procs: held
            .limited
            .as_ref()
            .map(Limited::procs)
            .unwrap_or_default(),
        terminal: held
            .terminal
            .as_ref()
            .map(Interactive::slave_fd)
            .or(held.hub.as_ref().and_then(Hub::slave_fd)),
    })?;
    let pid = starting.pid;
    // The log's thread after the fork, which it would have kept from entering the sandbox itself;
    // the relays' too.
    if let Some(log) = held.log.as_mut() {
        log.start()?;
    }
    for relay in &mut relays {
        relay
            .start()
            .map_err(|e| Error::System("cannot relay the job's output", e))?;
    }
    let cgroup = held.cgroup.holding(pid, starting.placed.is_some());
    // A job that asked for limits runs within them or not at all.
    if let Some(limited) = &held.limited {
        if let Err(why) = limited.holds(pid, cgroup.get()) {
            starting.abandon();
            return Err(Error::Sandbox(format!("cannot limit the job: {why}")));
        }
    }
    let mut record = held.record;
    record.cgroup = cgroup.path();
    record.pid = Some(pid.as_raw());
    record.pid_start = crate::sys::process::start_time(pid.as_raw());
    // In the foreground the JSON start line, like the human one, comes before anything of CMD.
    if notify.is_none() && options.speech == Speech::Json {
        if let Ok(line) = serde_json::to_string(&record) {
            say!("{line}");
        }
    }
    let broker = starting.release()?.broker;
    // CMD runs: from here its worktree is the job's, whatever happens to this process.
    prepared.disown();
    journal::write_running(prepared, &record);
    Ok(Launched {
        record,
        pid,
        broker,
        proxy: held.proxy,
        forwards: held.forwards,
        cache_layers: held.cache_layers,
        log: held.log,
        terminal: held.terminal,
        hub: held.hub,
        relays,
        ports: held.ports,
        cgroup,
        limited: held.limited,
        short_tmp: held.short_tmp,
        trusted: trust.withdraw,
        clock,
        writable,
    })
}

/// The job's sandbox built, and what it holds taken: ports, the proxy, its log (background) or
/// terminal (foreground, interactive), its cgroup; its environment and first record.
fn hold(options: &RunOptions, prepared: &mut Prepared, notify: Option<&Notify>) -> Result<Holding> {
    let state = store::state_dir()?;
    let mut confinement = confine(options, prepared)?;
    let ports = Ports::reserve(&state, prepared.id.as_str())?;
    let entered = enter_tier(
        confinement.rules.as_mut(),
        &mut confinement.report,
        prepared,
    )?;
    let holder = entered.holder;
    // The network proxy of a domain allowlist, before anything of the job runs (setup included).
    let proxy = start_proxy(prepared, confinement.rules.as_mut(), ports.first(), holder)?;
    let forwards = holder.filter(|h| h.network()).map(|h| {
        Forwards::start(
            h,
            &crate::supervise::ports::ports_from(ports.first()),
            &named_local(prepared),
        )
    });
    let log = match notify {
        Some(_) => Some(Log::open(&log_path(prepared), log::max_from_env()?)?),
        None => None,
    };
    let terminal = match (notify, options.mode) {
        (None, Mode::Foreground { pty: true }) if interactive::wanted() => Some(
            Interactive::open()
                .map_err(|e| Error::System("cannot open a terminal for the job", e))?,
        ),
        _ => None,
    };
    let hub = match (notify, options.tty) {
        (Some(_), Some(tty)) => Some(
            Hub::open(&prepared.job_dir, tty.size)
                .map_err(|e| Error::System("cannot open a terminal for the job", e))?,
        ),
        _ => None,
    };
    // The job's own terminal is a device it may write and control.
    if let Some(rules) = confinement.rules.as_mut() {
        let paths: Vec<PathBuf> = terminal
            .as_ref()
            .and_then(Interactive::slave_path)
            .into_iter()
            .chain(hub.as_ref().and_then(Hub::slave_path))
            .collect();
        rules.add_devices(&paths);
    }
    let proxy_url = proxy.as_ref().map(Proxy::url);
    let short_tmp = ShortTmp::make(&prepared.tmpdir, prepared.id.as_str());
    let made = Made::of_job(
        options,
        prepared,
        ports.first(),
        proxy_url.as_deref(),
        short_tmp.or(&prepared.tmpdir),
    );
    let mut env = environment(&made);
    let mut notes = confinement.notes;
    let secrets = removed_secrets(&made);
    if !secrets.is_empty() {
        let names: Vec<String> = secrets.iter().map(|n| crate::controls::name(n)).collect();
        notes.push(format!(
            "secret variables not passed to the job: {} (pass one on with --env NAME=\"$NAME\", \
             or keep it in a profile's [environment] keep)",
            names.join(", ")
        ));
    }
    for (key, value) in entered.env {
        env.retain(|(k, _)| k.as_os_str() != key.as_str());
        env.push((key.into(), value));
    }
    let cgroup = JobCgroup::create(prepared.id.as_str());
    let limits = job_limits(options, prepared)?;
    let limited = match limits.is_empty() {
        true => None,
        false => Some(
            Limited::enforce(&limits, prepared.id.as_str(), cgroup.get()).map_err(|why| {
                Error::Sandbox(format!("cannot limit the job ({}): {why}", limits.shown()))
            })?,
        ),
    };
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only changes how orphans of this process are re-parented.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
    }
    let mut record = journal::running(options, prepared, confinement.report, worktree(prepared));
    record.log = log
        .as_ref()
        .map(|_| log_path(prepared).display().to_string());
    record.port = Some(ports.first());
    record.limits = (!limits.is_empty()).then_some(limits);
    record.cgroup = cgroup.path();
    record.background = notify.is_some();
    Ok(Holding {
        rules: confinement.rules,
        notes: {
            if let Some(limited) = &limited {
                notes.push(format!("limits: {} ({})", limits.shown(), limited.kind()));
            }
            notes
        },
        ports,
        proxy,
        forwards,
        cache_layers: entered.layers,
        log,
        terminal,
        hub,
        cgroup,
        limited,
        short_tmp,
        env,
        record,
    })
}

/// The worktree part of the running job's record.
fn worktree(prepared: &Prepared) -> Option<WorktreeReport> {
    prepared.worktree.as_ref().map(|jw| {
        let created = &jw.created;
        let mut wt = pending_worktree(
            &created.path,
            &created.branch,
            &created.base,
            &jw.project.top,
        );
        wt.dispatch_dirty = created.dispatch_dirty;
        wt.project_branch = created.project_branch.clone();
        wt.pull_request = created.pull_request;
        wt.started_from = created.started_from.clone();
        wt
    })
}

fn log_path(prepared: &Prepared) -> PathBuf {
    prepared.job_dir.join("output.log")
}

/// The agent's own trust of the project carried to the job's worktree (sandbox/agent/trust.rs),
/// when the job runs in a fresh worktree of what the user has in the project (not a pull request,
/// not a base only jobs' branches reach, not a kept worktree a job wrote in) under a policy that
/// extends the agent's profile: `env` is the job's environment. What an agent trusts a folder for
/// is its settings and hooks there, which then run without asking.
fn trust_worktree(prepared: &Prepared, env: &[(OsString, OsString)]) -> Trust {
    let (Some(found), Some(wt)) = (&prepared.agent, &prepared.worktree) else {
        return Trust::default();
    };
    let vouched = wt.created.vouched && wt.created.pull_request.is_none();
    if !vouched || prepared.resumed.is_some() {
        return Trust::default();
    }
    if !prepared
        .policy
        .sources
        .iter()
        .any(|s| s == found.agent.profile)
    {
        return Trust::default();
    }
    let caller: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let project = [wt.project.top.as_path(), wt.project.caller_top.as_path()];
    // As the agent names the folder it runs in: every link resolved.
    let worktree = std::fs::canonicalize(&wt.created.path).unwrap_or(wt.created.path.clone());
    trust::carry(
        &found.agent,
        &Places {
            project: &project,
            worktree: &worktree,
            tmpdir: &prepared.tmpdir,
            caller: &caller,
            job: env,
        },
    )
}

/// CMD's argv: the profile's arguments for its own agent (`[command]`), then `trusting` (what
/// trusts the worktree), go right after its first word, with a note saying so.
fn argv(
    options: &RunOptions,
    prepared: &Prepared,
    trusting: Vec<String>,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let mut argv = options.command.clone();
    if !trusting.is_empty() && !argv.is_empty() {
        argv.splice(1..1, trusting);
    }
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
    argv
}

/// CMD's standard streams: the log's pipe for a background job (stdin from /dev/null), else the
/// caller's; in headless mode an output stream that is the user's terminal goes through a pipe
/// (supervise/relay.rs). The relays, to start once CMD is forked.
fn stdio(log: Option<&Log>, headless: bool) -> Result<(Stdio, Stdio, Stdio, Vec<Relay>)> {
    let Some(log) = log else {
        if !headless {
            return Ok((
                Stdio::inherit(),
                Stdio::inherit(),
                Stdio::inherit(),
                Vec::new(),
            ));
        }
        let (stdout, stderr, relays) =
            relay::outputs().map_err(|e| Error::System("cannot relay the job's output", e))?;
        return Ok((Stdio::inherit(), stdout, stderr, relays));
    };
    let share = || {
        log.writer
            .try_clone()
            .map_err(|e| Error::System("cannot share the log pipe", e))
    };
    Ok((
        Stdio::null(),
        Stdio::from(share()?),
        Stdio::from(share()?),
        Vec::new(),
    ))
}

/// The job's limits: the command line's, else its policy's, else the configuration's.
fn job_limits(options: &RunOptions, prepared: &Prepared) -> Result<crate::job::record::JobLimits> {
    let config = crate::config::load(None)?.config;
    let memory = match &config.memory {
        Some(text) => Some(crate::words::parse_size(text).ok_or_else(|| {
            Error::Usage(format!(
                "the configuration's memory = {text:?}: expected a size (4G)"
            ))
        })?),
        None => None,
    };
    let configured = crate::job::record::JobLimits {
        memory,
        millicpus: config.cpus.map(|c| (c * 1000.0).round().max(10.0) as u64),
        pids: config.pids,
    };
    Ok(options
        .limits
        .or(prepared.policy.policy.limits.cgroup)
        .or(configured))
}
