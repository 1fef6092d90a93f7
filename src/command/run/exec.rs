//! `isolate exec JOB -- CMD`: another command in a running (or kept) job's worktree, under the job's
//! own recorded policy and the same sandbox a job gets (Landlock, the seccomp layer and its broker,
//! the job's proxy allowlist, the job's ports and TMPDIR), on a terminal of its own when stdin is
//! one, supervised like a job (its own tree, subreaper, cgroup where one can be made). It is part
//! of the job: on record in the job's directory while it runs (job::execs), so that the job's end
//! stops it first and no cleanup removes the worktree under it, and stopped when the job's
//! supervisor goes. Nothing of the job's record changes; the exit status is CMD's.

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::cli::ExecArgs;
use crate::command::report_error;
use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::execs;
use crate::job::record::{Record, State};
use crate::job::store;
use crate::sandbox::plan;
use crate::supervise::cgroup::Cgroup;
use crate::supervise::interactive::{self, Interactive, Terminal};
use crate::supervise::reaper::{self, Signals};
use crate::supervise::relay;
use crate::supervise::spawn;
use crate::sys::pidfd::PidFd;

use super::confine::project_readable;
use super::environment::{environment, Made};
use super::network::proxy_for;
use super::resume_lock::ResumeLock;

/// The grace between SIGTERM and SIGKILL when CMD is stopped.
const GRACE: Duration = Duration::from_secs(10);

pub fn exec(args: ExecArgs) -> i32 {
    match run_in_job(args) {
        Ok(status) => status,
        Err(e) => {
            report_error(&e);
            e.run_exit_code()
        }
    }
}

/// The job whose worktree CMD runs in, and how it stands.
struct Target {
    job_dir: PathBuf,
    record: Record,
    worktree: PathBuf,
    project: Project,
    /// The job runs: CMD ends with it. Else its kept worktree is held by the resume lock.
    running: bool,
}

fn run_in_job(args: ExecArgs) -> Result<i32> {
    let mut signals = Signals::install()?;
    let target = target(&args.job)?;
    let _lock = match target.running {
        true => None,
        false => Some(ResumeLock::take(&target.job_dir, &target.record.id)?),
    };
    let _registration = execs::register(&target.job_dir)?;
    let record = &target.record;
    let policy = crate::command::recorded_policy(record)?;
    plan::check_kernel(&policy)?;
    let tmp = tempfile::Builder::new()
        .prefix("isolate-exec-")
        .tempdir()
        .map_err(|e| Error::System("cannot create a temporary directory", e))?;
    let tmpdir = match target.running && target.job_dir.join("tmp").is_dir() {
        true => target.job_dir.join("tmp"),
        false => tmp.path().to_path_buf(),
    };
    // In a running job, the state of the jobs it starts is the job's (job/nest.rs).
    let nested = crate::job::nest::state_of(&target.job_dir);
    let nested = (target.running && nested.is_dir()).then_some(nested);
    let writable: Vec<PathBuf> = std::iter::once(tmpdir.clone())
        .chain(nested.clone())
        .collect();
    let project = &target.project;
    let readable = project_readable(project);
    let allow_write: Vec<PathBuf> = record
        .sandbox
        .allow_write
        .iter()
        .map(PathBuf::from)
        .collect();
    let job = plan::Job {
        worktree: Some(&target.worktree),
        writable: &writable,
        readable: &readable,
        allow_write: &allow_write,
        installation: &[],
    };
    let mut rules = plan::build(&policy, &job, false)?
        .rules
        .ok_or_else(|| Error::Usage("the job's policy builds no sandbox".into()))?;
    let port = record.port.unwrap_or(0);
    let proxy = proxy_for(&[&policy], &target.job_dir, &mut rules, port, None)?;
    let terminal = match !args.no_pty && interactive::wanted() {
        true => Some(
            Interactive::open()
                .map_err(|e| Error::System("cannot open a terminal for the command", e))?,
        ),
        false => None,
    };
    if let Some(t) = &terminal {
        rules.add_devices(&t.slave_path().into_iter().collect::<Vec<_>>());
    }
    let wt = record.worktree.as_ref();
    let proxy_url = proxy.as_ref().map(|p| p.url());
    let cwd = cwd_in(&target);
    let env = environment(&Made {
        policies: vec![&policy],
        id: &record.id,
        tmpdir: &tmpdir,
        cwd: &cwd,
        nested,
        worktree: wt.map(|wt| {
            (
                target.worktree.as_path(),
                wt.branch.as_str(),
                wt.base.as_str(),
                project.top.as_path(),
            )
        }),
        port,
        proxy: proxy_url.as_deref(),
        extra: &[],
    });
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) only changes how orphans of this process are re-parented.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    let cgroup = Cgroup::create(&format!("{}-exec-{}", record.id, std::process::id()));
    // Headless, an output stream that is the user's terminal goes through a pipe (relay.rs).
    let (stdout, stderr, mut relays) = match terminal.is_none() && !args.no_pty {
        true => relay::outputs().map_err(|e| Error::System("cannot relay the output", e))?,
        false => (spawn::Stdio::inherit(), spawn::Stdio::inherit(), Vec::new()),
    };
    let spawned = spawn::spawn(spawn::Spawn {
        argv: args.command,
        cwd,
        env,
        rules: Some(rules),
        stdin: spawn::Stdio::inherit(),
        stdout,
        stderr,
        cgroup_procs: cgroup.as_ref().and_then(Cgroup::procs_for_child),
        limit_procs: Vec::new(),
        terminal: terminal.as_ref().map(Interactive::slave_fd),
    });
    let spawned = match spawned {
        Ok(spawned) => spawned,
        Err(e) => {
            if let Some(cg) = &cgroup {
                cg.remove();
            }
            return Err(e);
        }
    };
    for relay in &mut relays {
        if let Err(e) = relay.start() {
            say!("isolate: warning: cannot relay the command's output: {e}");
        }
    }
    if target.running {
        end_with(record);
    }
    let mut terminal = terminal;
    if let Some(t) = terminal.as_mut() {
        if let Err(e) = t.start() {
            say!("isolate: warning: cannot relay the command's terminal: {e}");
        }
    }
    let ending = reaper::supervise(
        spawned.pid,
        &mut signals,
        args.timeout,
        GRACE,
        cgroup.as_ref(),
        terminal.as_mut().map(|t| t as &mut dyn Terminal),
    );
    drop(terminal);
    for relay in relays {
        relay.finish();
    }
    drop(spawned.broker);
    if let Some(proxy) = proxy {
        proxy.stop();
    }
    if let Some(cg) = &cgroup {
        cg.remove();
    }
    Ok(ending.exit().status())
}

/// The job named by `query`, running or ended with its worktree kept.
fn target(query: &str) -> Result<Target> {
    let state = store::state_dir()?;
    let (job_dir, record) = store::resolve(&state, query)?;
    let refuse = |why: &str| Error::Job {
        job: record.id.clone(),
        why: why.into(),
    };
    let running = match record.effective_state() {
        State::Running => true,
        State::Queued => {
            return Err(refuse(
                "is queued: it has no worktree or sandbox yet (isolate wait for it to start)",
            ))
        }
        State::Lost => {
            return Err(refuse(
                "was lost (its supervisor died); settle it with isolate rm or prune first",
            ))
        }
        _ => false,
    };
    let wt = record
        .worktree
        .as_ref()
        .filter(|wt| !wt.removed && Path::new(&wt.path).is_dir())
        .ok_or_else(|| {
            refuse("has no worktree to run a command in (exec needs a --worktree job)")
        })?;
    let worktree = PathBuf::from(&wt.path);
    let project = Project::discover(Path::new(&wt.repo))?;
    Ok(Target {
        job_dir,
        worktree,
        project,
        running,
        record,
    })
}

/// CMD's directory: the caller's own when it is inside the worktree, else the worktree's top.
fn cwd_in(target: &Target) -> PathBuf {
    match std::env::current_dir() {
        Ok(cwd) if cwd.starts_with(&target.worktree) => cwd,
        _ => target.worktree.clone(),
    }
}

/// Once the job's supervisor is gone (the job ended and was settled, or the supervisor was
/// killed), this process stops CMD as a SIGTERM to it would (the stop sequence). The job's own end
/// asks first (`stop_execs`); this is for a supervisor that could not.
fn end_with(record: &Record) {
    // A supervisor gone already (the job ended while CMD started) is an end to follow at once.
    let pidfd = match PidFd::open(record.supervisor_pid, 0) {
        Ok(pidfd) if record.supervisor_alive() => pidfd,
        _ => {
            let _ = kill(Pid::this(), Signal::SIGTERM);
            return;
        }
    };
    let _ = std::thread::Builder::new()
        .name("isolate-exec-watch".into())
        .spawn(move || {
            while !pidfd.exited_within(Duration::from_secs(3600)) {}
            let _ = kill(Pid::this(), Signal::SIGTERM);
        });
}
