//! `isolate run`: prepare (project, id, worktree, plan), start CMD, supervise it to the end, settle
//! the worktree, record and report. Anything that fails before CMD runs undoes what was made and
//! exits 125 (126/127 when CMD cannot be executed or is not found), leaving no job behind.

use std::ffi::OsString;
use std::fs;
use std::os::fd::AsFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Instant, SystemTime};

use crate::cli::RunArgs;
use crate::command::report_error;
use crate::config;
use crate::error::{Error, Result};
use crate::git;
use crate::job::id::JobId;
use crate::job::record::{Record, State, WorktreeReport, SCHEMA};
use crate::job::store;
use crate::sandbox::{plan, policy};
use crate::supervise::background::{self, Notify, Role};
use crate::supervise::cgroup::Cgroup;
use crate::supervise::interactive::{self, Interactive};
use crate::supervise::log::{self, Log};
use crate::supervise::ports;
use crate::supervise::reaper::{self, Signals};
use crate::supervise::{spawn, tree};
use crate::worktree::cleanup::{self, shell_quote};
use crate::worktree::create::{self, Created};
use crate::worktree::project::Project;

/// How many fresh ids to draw before giving up (each draw collides with 1/65536 chance per job).
const ID_ATTEMPTS: usize = 64;

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

/// Everything made before CMD starts.
struct Prepared {
    id: JobId,
    job_dir: PathBuf,
    tmpdir: PathBuf,
    cwd: PathBuf,
    policy: policy::Loaded,
    worktree: Option<(Project, Created, PathBuf)>,
    /// `--resume`: the ended job's record; its worktree, refs and record are never undone.
    resumed: Option<Record>,
    /// The project's setup command, for a fresh worktree.
    setup: Option<String>,
}

impl Prepared {
    fn undo(&self) {
        if self.resumed.is_some() {
            let _ = fs::remove_dir_all(&self.tmpdir);
            let _ = fs::remove_file(self.job_dir.join(RESUME_LOCK));
            return;
        }
        if let Some((project, created, _)) = &self.worktree {
            create::undo(project, &self.id, &created.path, &created.base);
        }
        store::forget(&self.job_dir);
    }
}

/// Taken exclusively by the supervisor of a resumed job, so two resumes never share a worktree.
const RESUME_LOCK: &str = "resume.lock";

/// `--resume JOB`: the kept worktree of an ended job, same id, same branch.
fn prepare_resume(query: &str, args: &RunArgs) -> Result<Prepared> {
    let state = store::state_dir()?;
    let (job_dir, record) = store::resolve(&state, query)?;
    match record.effective_state() {
        State::Running => {
            return Err(Error::Refused(format!(
                "job {} is running; wait for it or stop it",
                record.id
            )))
        }
        State::Lost => {
            return Err(Error::Refused(format!(
                "job {} was lost (its supervisor died); settle it with isolate rm or prune first",
                record.id
            )))
        }
        _ => {}
    }
    let id = JobId::parse(&record.id)
        .ok_or_else(|| Error::Refused(format!("the record of {query} has an invalid id")))?;
    let wt = record
        .worktree
        .clone()
        .filter(|wt| !wt.removed && Path::new(&wt.path).is_dir())
        .ok_or_else(|| Error::Refused(format!("job {id} has no kept worktree to resume")))?;
    let lock = job_dir.join(RESUME_LOCK);
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(|_| {
            Error::Refused(format!(
                "job {id} is being resumed already ({})",
                lock.display()
            ))
        })?;
    let take = || -> Result<Prepared> {
        let project = Project::discover(Path::new(&wt.repo))?;
        let path = PathBuf::from(&wt.path);
        let key_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let tmpdir = job_dir.join("tmp");
        let _ = fs::remove_dir_all(&tmpdir);
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&tmpdir)
            .map_err(|e| Error::io("cannot create the job's TMPDIR", &tmpdir, e))?;
        let created = Created {
            path: path.clone(),
            branch: wt.branch.clone(),
            base: wt.base.clone(),
            dispatch_dirty: false,
            included: 0,
            project_branch: wt.project_branch.clone(),
        };
        Ok(Prepared {
            id: id.clone(),
            job_dir: job_dir.clone(),
            tmpdir,
            cwd: path,
            policy: policy::load(args.policy.as_deref().unwrap_or("default"))?,
            worktree: Some((project, created, key_dir)),
            resumed: Some(record.clone()),
            setup: None,
        })
    };
    take().inspect_err(|_| {
        let _ = fs::remove_file(&lock);
    })
}

fn prepare(args: &RunArgs) -> Result<Prepared> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::io("cannot read the current directory", ".", e))?;
    let state = store::state_dir()?;
    let mut target = if args.worktree {
        Some(worktree_target(&cwd, &state, args)?)
    } else {
        None
    };
    let config = match &target {
        Some(t) => t.config.clone(),
        None => config::load(None)?,
    };
    let policy_name = args
        .policy
        .clone()
        .or(config.config.policy.clone())
        .unwrap_or_else(|| "default".into());
    let mut policy = policy::load(&policy_name)?;
    // Fail closed before anything is made: every feature the policy requires, on this kernel.
    if !args.no_sandbox {
        plan::check_kernel(&policy)?;
    }
    if let Some(t) = &target {
        fs::create_dir_all(&t.key_dir)
            .map_err(|e| Error::io("cannot create the worktree directory", &t.key_dir, e))?;
        config::exclude_root_in_project(&t.project, &t.root)?;
    }
    let name = args.name.as_ref().map(|n| n.as_encoded_bytes().to_vec());
    let name_bytes = name
        .as_deref()
        .unwrap_or_else(|| slug_source(&args.command));

    for _ in 0..ID_ATTEMPTS {
        let id = JobId::generate(name_bytes);
        let Some(job_dir) = store::claim(&state, &id)? else {
            continue;
        };
        let tmpdir = job_dir.join("tmp");
        if let Err(e) = fs::DirBuilder::new().mode(0o700).create(&tmpdir) {
            store::forget(&job_dir);
            return Err(Error::io("cannot create the job's TMPDIR", &tmpdir, e));
        }
        let mut prepared = Prepared {
            id,
            job_dir,
            tmpdir,
            cwd: cwd.clone(),
            policy,
            worktree: None,
            resumed: None,
            setup: None,
        };
        let Some(t) = target else {
            return Ok(prepared);
        };
        let path = t.key_dir.join(prepared.id.as_str());
        // On record from the start: a supervisor killed while it creates the worktree leaves a job
        // that reads as `lost`, naming what it was making, never an unexplained directory.
        store::write_record(&prepared.job_dir, &creating(args, &prepared, &t, &path))?;
        let include = t.config.config.include.as_deref().unwrap_or_default();
        match create::create(&t.project, &prepared.id, &path, &t.base, include) {
            Ok(Some(mut created)) => {
                let inside = path.join(&t.project.prefix);
                prepared.cwd = if inside.is_dir() {
                    inside
                } else {
                    path.clone()
                };
                created.project_branch = t.project_branch.clone();
                prepared.setup = t.config.config.setup.clone();
                prepared.worktree = Some((t.project, created, t.key_dir));
                return Ok(prepared);
            }
            Ok(None) => {
                // Taken in the project (or its directory exists): never reuse, never adopt.
                store::forget(&prepared.job_dir);
                policy = prepared.policy;
                target = Some(t);
            }
            Err(e) => {
                store::forget(&prepared.job_dir);
                return Err(e);
            }
        }
    }
    Err(Error::Other(format!(
        "could not find a free job id in {ID_ATTEMPTS} attempts"
    )))
}

/// The record of a job whose worktree is being made.
fn creating(args: &RunArgs, prepared: &Prepared, t: &Target, path: &Path) -> Record {
    let sandbox = crate::job::record::SandboxReport {
        enforced: !args.no_sandbox,
        landlock_abi: None,
        policy: prepared.policy.name.clone(),
        gaps: Vec::new(),
    };
    let mut worktree = pending_worktree(path, &prepared.id.branch(), &t.base, &t.project.top);
    worktree.project_branch = t.project_branch.clone();
    worktree.reason = "creating the worktree".into();
    let mut record = running_record(args, prepared, sandbox, Some(worktree));
    record.background = args.bg;
    record
}

/// The record of a job this process supervises, as it starts.
fn running_record(
    args: &RunArgs,
    prepared: &Prepared,
    sandbox: crate::job::record::SandboxReport,
    worktree: Option<WorktreeReport>,
) -> Record {
    let me = std::process::id() as i32;
    Record {
        schema: SCHEMA,
        id: prepared.id.to_string(),
        name: match &prepared.resumed {
            Some(old) => old.name.clone(),
            None => args.name.as_ref().map(|n| n.to_string_lossy().into_owned()),
        },
        command: args.command.clone(),
        state: State::Running,
        pid: None,
        supervisor_pid: me,
        supervisor_start: tree::start_time(me).unwrap_or(0),
        started_at: timestamp(SystemTime::now()),
        ended_at: None,
        exit: None,
        sandbox,
        cwd: prepared.cwd.display().to_string(),
        worktree,
        log: None,
        port: None,
        cgroup: None,
        background: false,
    }
}

/// Where a `--worktree` job goes.
struct Target {
    project: Project,
    base: String,
    /// The project's branch the caller is on (`main`), which `merge` and `sync` use.
    project_branch: Option<String>,
    config: config::Loaded,
    root: PathBuf,
    key_dir: PathBuf,
}

/// For `--worktree`: the project, the base commit and the directory its worktrees go in.
fn worktree_target(cwd: &Path, state: &Path, args: &RunArgs) -> Result<Target> {
    // Refused before git runs here: a job's worktree is the job's to write, config included.
    if let Some(top) = job_worktree(cwd, state) {
        return Err(Error::Usage(format!(
            "{} is the worktree of an isolate job; a job cannot start another job's worktree inside it \
             (use `isolate run --resume JOB` from the project)",
            top.display()
        )));
    }
    let project = Project::discover(cwd)?;
    let base = match &args.base {
        Some(rev) => project.resolve_commit(rev)?.ok_or_else(|| {
            Error::Usage(format!(
                "--base {rev}: not a commit in {}",
                project.top.display()
            ))
        })?,
        None => project
            .resolve_commit("HEAD")?
            .ok_or_else(|| Error::NoCommit(project.top.clone()))?,
    };
    let config = config::load(Some(&project))?;
    let root = config.worktree_root(state, &project)?;
    let key_dir = root.join(project.key());
    let project_branch = project.current_branch()?;
    Ok(Target {
        project,
        base,
        project_branch,
        config,
        root,
        key_dir,
    })
}

/// The top of the job worktree `dir` is in, if it is one: a repository whose config carries
/// isolate's `[isolate]` mark, or a directory under the state's worktrees. Read as text: nothing
/// runs there.
fn job_worktree(dir: &Path, state: &Path) -> Option<PathBuf> {
    if let (Ok(dir), Ok(root)) = (
        fs::canonicalize(dir),
        fs::canonicalize(state.join("worktrees")),
    ) {
        if dir.starts_with(&root) {
            return Some(dir);
        }
    }
    let top = dir.ancestors().find(|d| d.join(".git").exists())?;
    let config = crate::textfile::read(&top.join(".git/config")).ok()?;
    config
        .lines()
        .any(|l| l.trim() == "[isolate]")
        .then(|| top.to_path_buf())
}

/// The job is named after its command when `--name` is absent.
fn slug_source(command: &[String]) -> &[u8] {
    command
        .first()
        .map(|c| {
            Path::new(c)
                .file_name()
                .map_or(c.as_bytes(), |n| n.as_encoded_bytes())
        })
        .unwrap_or(b"task")
}

/// Starts CMD and supervises it to the end. `notify` is set in a background supervisor: the caller
/// waits on it for the running record, or for the reason CMD could not start.
fn execute(
    args: RunArgs,
    prepared: Prepared,
    signals: &mut Signals,
    notify: Option<Notify>,
) -> i32 {
    // The policy's default timeout applies when --timeout is not given.
    let timeout = args.timeout.or(prepared.policy.policy.limits.timeout);
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
    let writable: Vec<PathBuf> = prepared
        .worktree
        .iter()
        .map(|(_, created, _)| created.path.clone())
        .chain([prepared.tmpdir.clone()])
        .collect();
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
    let job = plan::Job {
        writable: &writable,
        readable: &readable,
        allow_write: &args.allow_write,
    };
    let (mut rules, sandbox, notes) = match plan::build(&prepared.policy, &job, args.no_sandbox) {
        Ok(built) => built,
        Err(e) => return not_started(notify, &prepared, &e),
    };
    let ports = match ports::reserve(&state, prepared.id.as_str()) {
        Ok(block) => block,
        Err(e) => return not_started(notify, &prepared, &e),
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
    // The job's own terminal is the one device it may write and control.
    if let (Some(rules), Some(t)) = (rules.as_mut(), terminal.as_ref()) {
        rules.terminal.extend(t.slave_path());
        rules.terminal.push(PathBuf::from("/dev/tty"));
    }
    let env = environment(&args, &prepared, ports.first);
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
                    args.grace,
                    cgroup_procs,
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
    let spawned = spawn::spawn(spawn::Spawn {
        argv: args.command.clone(),
        cwd: prepared.cwd.clone(),
        env,
        rules,
        stdin,
        stdout,
        stderr,
        cgroup_procs: cgroup.as_ref().and_then(Cgroup::procs_for_child),
        terminal: terminal.as_ref().map(Interactive::slave_fd),
    });
    let pid = match spawned {
        Ok(pid) => pid,
        Err(e) => {
            ports.release();
            if let Some(cg) = &cgroup {
                cg.remove();
            }
            return not_started(notify, &prepared, &e);
        }
    };
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
    if let Err(e) = store::write_record(&prepared.job_dir, &record) {
        report_error(&e);
    }
    match notify {
        Some(n) => n.started(&record),
        None if args.json => {
            if let Ok(line) = serde_json::to_string(&record) {
                say!("{line}");
            }
        }
        None => {}
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
    record.exit = Some(ending.exit);
    record.state = if ending.timed_out {
        State::TimedOut
    } else if ending.exit.signal.is_some() {
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
            keep: args.keep,
            dispatch_dirty: created.dispatch_dirty,
            project_branch: created.project_branch.as_deref(),
        };
        match cleanup::settle(&job) {
            Ok(report) => record.worktree = Some(report),
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
    record.exit_status().unwrap_or(125)
}

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
    grace: std::time::Duration,
    cgroup_procs: Option<std::fs::File>,
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
    .map_err(|e| Error::Other(format!("the setup command {setup:?} could not start: {e}")))?;
    let ending = reaper::supervise(pid, signals, None, grace, None, None);
    match ending.exit.status() {
        0 => Ok(()),
        status => Err(Error::Other(format!(
            "the setup command {setup:?} failed with status {status}; the new worktree was removed"
        ))),
    }
}

/// The worktree part of a running job's record: where it is; the outcome comes at the end.
fn pending_worktree(path: &Path, branch: &str, base: &str, repo: &Path) -> WorktreeReport {
    WorktreeReport {
        path: path.display().to_string(),
        branch: branch.to_string(),
        base: base.to_string(),
        repo: repo.display().to_string(),
        commits: 0,
        dirty: Default::default(),
        stash: 0,
        other_refs: Vec::new(),
        in_progress: Vec::new(),
        ignored: 0,
        dispatch_dirty: false,
        removed: false,
        branch_kept: true,
        reason: "running".into(),
        handoff: None,
        branch_tip: None,
        project_branch: None,
    }
}

/// CMD's environment (spec/cli.md, "What CMD gets").
fn environment(args: &RunArgs, prepared: &Prepared, port: u16) -> Vec<(OsString, OsString)> {
    let policy = &prepared.policy.policy.environment;
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !policy.remove.iter().any(|r| k == r.as_str()))
        .filter(|(k, _)| !k.to_string_lossy().starts_with("ISOLATE_"))
        .collect();
    let mut set = |key: &str, value: OsString| {
        env.retain(|(k, _)| k != key);
        env.push((key.into(), value));
    };
    for (k, v) in &policy.set {
        set(k, v.into());
    }
    set("ISOLATE_JOB", prepared.id.as_str().into());
    set("ISOLATE_PORT", port.to_string().into());
    set("TMPDIR", prepared.tmpdir.clone().into());
    if let Some((project, created, _)) = &prepared.worktree {
        set("ISOLATE_WORKTREE", created.path.clone().into());
        set("ISOLATE_BRANCH", created.branch.clone().into());
        set("ISOLATE_BASE", created.base.clone().into());
        set("ISOLATE_REPO", project.top.clone().into());
    }
    // git's automatic gc and maintenance off for the whole tree: `gc --auto` detaches a process that
    // would outlive the main process and be killed mid-way by the end-of-job stop.
    let count: usize = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    set(&format!("GIT_CONFIG_KEY_{count}"), "gc.auto".into());
    set(&format!("GIT_CONFIG_VALUE_{count}"), "0".into());
    set(
        &format!("GIT_CONFIG_KEY_{}", count + 1),
        "maintenance.auto".into(),
    );
    set(&format!("GIT_CONFIG_VALUE_{}", count + 1), "false".into());
    set("GIT_CONFIG_COUNT", (count + 2).to_string().into());
    if prepared.worktree.is_some() {
        // The job's git must find the job's repository, not one the caller pointed at.
        env.retain(|(k, _)| !git::LOCATION_VARS.iter().any(|r| k == r));
    }
    for (k, v) in &args.env {
        env.retain(|(key, _)| key != k.as_str());
        env.push((k.into(), v.into()));
    }
    env
}

fn timestamp(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// `--report FILE`: atomically for a file path; straight into `/dev/fd/N` or another non-file.
fn write_report(path: &Path, record: &Record) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(record).map_err(|e| Error::Other(e.to_string()))?;
    json.push(b'\n');
    let regular_or_new = fs::metadata(path).map(|m| m.is_file()).unwrap_or(true);
    if regular_or_new && !path.starts_with("/dev") && !path.starts_with("/proc") {
        store::write_atomic(path, &json)
    } else {
        fs::write(path, &json).map_err(|e| Error::io("cannot write the report", path, e))
    }
}

fn announce_start(prepared: &Prepared, record: &Record, notes: &[String]) {
    let sandbox = match (record.sandbox.enforced, record.sandbox.landlock_abi) {
        (true, Some(abi)) => format!("landlock ABI {abi}, policy {}", record.sandbox.policy),
        _ => "UNSANDBOXED (--no-sandbox)".to_string(),
    };
    let place = match &prepared.worktree {
        Some((_, created, _)) => format!(
            "in {} (branch {} at {})",
            created.path.display(),
            created.branch,
            &created.base[..12.min(created.base.len())]
        ),
        None => format!("in {}", prepared.cwd.display()),
    };
    say!("isolate: job {} {place}; {sandbox}", record.id);
    for note in notes {
        say!("isolate: note: {note}");
    }
    if let Some((project, created, _)) = &prepared.worktree {
        if created.included > 0 {
            say!(
                "isolate: copied {} file{} named by .worktreeinclude",
                created.included,
                if created.included == 1 { "" } else { "s" }
            );
        }
        if created.dispatch_dirty {
            say!(
                "isolate: warning: uncommitted changes in {} are not in the worktree",
                project.caller_top.display()
            );
        }
    }
}

fn announce_end(args: &RunArgs, record: &Record, took: std::time::Duration) {
    if args.json {
        if let Ok(line) = serde_json::to_string(record) {
            say!("{line}");
        }
        return;
    }
    if args.quiet {
        return;
    }
    let how = match (record.state, record.exit) {
        (State::TimedOut, _) => format!(
            "timed out after {}",
            humantime::format_duration(args.timeout.unwrap_or_default())
        ),
        (_, Some(exit)) => match exit.signal {
            Some(sig) => format!("was killed by signal {sig} (status {})", exit.status()),
            None => format!("exited with status {}", exit.status()),
        },
        _ => "ended".to_string(),
    };
    let took = std::time::Duration::from_secs(took.as_secs());
    say!(
        "isolate: job {} {how} after {}",
        record.id,
        humantime::format_duration(took)
    );
    let Some(wt) = &record.worktree else {
        return;
    };
    let place = if wt.removed {
        let ignored = match wt.ignored {
            0 => String::new(),
            n => format!(
                " ({n} ignored entr{} went with it)",
                if n == 1 { "y" } else { "ies" }
            ),
        };
        format!("removed{ignored}")
    } else {
        format!("kept at {}", shell_quote(Path::new(&wt.path)))
    };
    say!("  worktree: {place}");
    say!("  outcome:  {}", wt.reason);
    let branch = if wt.branch_kept {
        format!(
            "{} ({} commit{} beyond base)",
            wt.branch,
            wt.commits,
            if wt.commits == 1 { "" } else { "s" }
        )
    } else {
        format!("{} deleted", wt.branch)
    };
    say!("  branch:   {branch}");
    if let Some(next) = &wt.handoff {
        say!("  next:     {next}");
    }
}
