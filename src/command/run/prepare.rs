//! Everything made before CMD starts: the job's id and record directory, its worktree (or the
//! kept one of `--resume`), and how to undo them.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::cli::RunArgs;
use crate::config;
use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::job::record::{Record, State};
use crate::job::store;
use crate::sandbox::made::Made;
use crate::sandbox::{agent, plan, policy};
use crate::worktree::create::{self, Created};

use super::records::creating;

/// How many fresh ids to draw before giving up (each draw collides with 1/65536 chance per job).
pub(super) const ID_ATTEMPTS: usize = 64;

/// Everything made before CMD starts.
pub(super) struct Prepared {
    pub(super) id: JobId,
    pub(super) job_dir: PathBuf,
    pub(super) tmpdir: PathBuf,
    pub(super) cwd: PathBuf,
    pub(super) policy: policy::Loaded,
    /// `--resume` with a --policy other than the job's: the job is held to both.
    pub(super) narrowing: Option<policy::Loaded>,
    pub(super) worktree: Option<(Project, Created, PathBuf)>,
    /// `--resume`: the ended job's record; its worktree, refs and record are never undone.
    pub(super) resumed: Option<Record>,
    /// The project's setup command, for a fresh worktree.
    pub(super) setup: Option<String>,
    /// Why the job runs under its policy.
    pub(super) chosen: Chosen,
    /// CMD's real executable, when it resolves (PATH looked up, symlinks followed).
    pub(super) executable: Option<PathBuf>,
    /// The agent CMD is, whatever policy it runs under (for the hint at the end).
    pub(super) agent: Option<agent::Detected>,
    /// What the plan made for the policy (undone with the rest).
    pub(super) made: Made,
}

/// Why a job runs under its policy.
#[derive(Debug, Clone)]
pub(super) enum Chosen {
    /// `--policy`.
    Given,
    /// The project's `.isolate.toml` (or the user's configuration).
    Configured,
    /// CMD is a known agent (`Prepared::agent`): its profile.
    Agent,
    /// `--resume`: the job's own.
    Recorded,
    Default,
}

impl Prepared {
    pub(super) fn undo(&self) {
        self.made.undo();
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
pub(super) const RESUME_LOCK: &str = "resume.lock";

/// `--resume JOB`: the kept worktree of an ended job, same id, same branch.
pub(super) fn prepare_resume(query: &str, args: &RunArgs) -> Result<Prepared> {
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
    // What runs in the job's worktree runs under the job's policy; another --policy can only narrow
    // it (both are enforced, stacked).
    let job_policy = crate::command::recorded_policy(&record)?;
    let narrowing = match args.policy.as_deref() {
        Some(name) => Some(policy::load(name)?).filter(|p| p.reference != job_policy.reference),
        None => None,
    };
    if !args.no_sandbox {
        plan::check_kernel(&job_policy)?;
        if let Some(extra) = &narrowing {
            plan::check_kernel(extra)?;
        }
    }
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
        let root = key_dir.parent().unwrap_or(&key_dir);
        check_allow_write(&args.allow_write, &state, Some(&project), root, true)?;
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
        let record_cwd = path.clone();
        let agent = detect(&args.command, &record_cwd, &[&record_cwd, &project.top]);
        // Never an installation from the job's own worktree, the project or the worktrees.
        let executable = executable(&args.command, &record_cwd).filter(|exe| {
            [&record_cwd, &project.top, &root.to_path_buf()]
                .iter()
                .all(|dir| {
                    !exe.starts_with(fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
                })
        });
        Ok(Prepared {
            id: id.clone(),
            job_dir: job_dir.clone(),
            tmpdir,
            cwd: path,
            policy: job_policy.clone(),
            narrowing: narrowing.clone(),
            worktree: Some((project, created, key_dir)),
            resumed: Some(record.clone()),
            setup: None,
            chosen: Chosen::Recorded,
            executable,
            agent,
            made: Made::default(),
        })
    };
    take().inspect_err(|_| {
        let _ = fs::remove_file(&lock);
    })
}

pub(super) fn prepare(args: &RunArgs) -> Result<Prepared> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::io("cannot read the current directory", ".", e))?;
    let state = store::state_dir()?;
    let mut target = if args.worktree {
        Some(worktree_target(&cwd, &state, args)?)
    } else {
        None
    };
    if !args.allow_write.is_empty() {
        match &target {
            Some(t) => {
                check_allow_write(&args.allow_write, &state, Some(&t.project), &t.root, true)?
            }
            None => {
                let project = Project::discover(&cwd).ok();
                let root = match &project {
                    Some(p) => config::load(Some(p))?.worktree_root(&state, p)?,
                    None => state.join("worktrees"),
                };
                check_allow_write(&args.allow_write, &state, project.as_ref(), &root, false)?
            }
        }
    }
    let config = match &target {
        Some(t) => t.config.clone(),
        None => config::load(None)?,
    };
    // --policy, then the configuration's, then the agent's when CMD is a known one, then default.
    let executable = executable(&args.command, &cwd);
    // The project is looked up (a git process) only when CMD is an agent at all.
    let detected = detect(&args.command, &cwd, &[&cwd]).filter(|found| {
        let top = match &target {
            Some(t) => Some(t.project.top.clone()),
            None => Project::discover(&cwd).ok().map(|p| p.top),
        };
        !top.is_some_and(|top| inside(found, &top))
    });
    let (policy_name, chosen) = match (&args.policy, &config.config.policy, detected.clone()) {
        (Some(name), _, _) => (name.clone(), Chosen::Given),
        (None, Some(name), _) => (name.clone(), Chosen::Configured),
        (None, None, Some(found)) => (found.agent.profile.to_string(), Chosen::Agent),
        (None, None, None) => ("default".to_string(), Chosen::Default),
    };
    let mut policy = policy::load(&policy_name)?;
    // The installation a policy may make readable is never the project's, the worktrees' or the
    // current directory's: a `pyvenv.cfg` there would say what it is.
    let executable = executable.filter(|exe| {
        if !policy.policy.filesystem.installation {
            return false;
        }
        let mut untrusted = vec![cwd.clone(), state.clone()];
        match &target {
            Some(t) => untrusted.extend([t.project.top.clone(), t.root.clone()]),
            None => untrusted.extend(Project::discover(&cwd).ok().map(|p| p.top)),
        }
        !untrusted.iter().any(|dir| {
            let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            exe.starts_with(dir)
        })
    });
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
            narrowing: None,
            worktree: None,
            resumed: None,
            setup: None,
            chosen: chosen.clone(),
            executable: executable.clone(),
            agent: detected.clone(),
            made: Made::default(),
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
                // `join("")` would add a trailing slash the worktree's path has not.
                let inside = match t.project.prefix.as_os_str().is_empty() {
                    true => path.clone(),
                    false => path.join(&t.project.prefix),
                };
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

/// Where a `--worktree` job goes.
pub(super) struct Target {
    pub(super) project: Project,
    pub(super) base: String,
    /// The project's branch the caller is on (`main`), which `merge` and `sync` use.
    pub(super) project_branch: Option<String>,
    pub(super) config: config::Loaded,
    pub(super) root: PathBuf,
    pub(super) key_dir: PathBuf,
}

/// `--allow-write` may not open what the sandbox is there to protect: `/`, the project or a directory
/// above it, its git directory, isolate's state directory or the worktree root (and what holds
/// them). With `--worktree` the project is the job's never, so a directory inside its checkout is
/// refused too; without, a directory of the checkout (`target`) is what the option is for. Refused
/// before anything is made (status 125).
pub(super) fn check_allow_write(
    paths: &[PathBuf],
    state: &Path,
    project: Option<&Project>,
    worktree_root: &Path,
    worktree: bool,
) -> Result<()> {
    let real = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    // Each protected place, and whether a writable path *inside* it is refused too.
    let mut protected: Vec<(PathBuf, &str, bool)> = Vec::new();
    if let Some(p) = project {
        protected.push((real(&p.top), "the project", worktree));
        protected.push((real(&p.caller_top), "the project's checkout", worktree));
        protected.push((real(&p.git_dir), "the project's git directory", true));
    }
    protected.push((real(state), "isolate's state directory", true));
    protected.push((real(worktree_root), "the worktree root", true));
    for path in paths {
        let canonical = plan::allowed_write(path)?;
        let refuse = |what: &str| {
            Error::Usage(format!(
                "--allow-write {}: that is {what}; the sandbox never opens it to a job \
                 (refused: /, the project or a directory above it, its git directory, isolate's state \
                 directory, the worktree root)",
                path.display()
            ))
        };
        if canonical == Path::new("/") {
            return Err(refuse("the whole filesystem"));
        }
        for (place, what, inside) in &protected {
            if place.starts_with(&canonical) {
                return Err(refuse(&format!("{what} or a directory holding it")));
            }
            if *inside && canonical.starts_with(place) {
                return Err(refuse(&format!("inside {what}")));
            }
        }
    }
    Ok(())
}

/// For `--worktree`: the project, the base commit and the directory its worktrees go in.
pub(super) fn worktree_target(cwd: &Path, state: &Path, args: &RunArgs) -> Result<Target> {
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
pub(super) fn job_worktree(dir: &Path, state: &Path) -> Option<PathBuf> {
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
pub(super) fn slug_source(command: &[String]) -> &[u8] {
    command
        .first()
        .map(|c| {
            Path::new(c)
                .file_name()
                .map_or(c.as_bytes(), |n| n.as_encoded_bytes())
        })
        .unwrap_or(b"task")
}

/// CMD's real executable, as exec will find it from `cwd` on the caller's `PATH`.
fn executable(command: &[String], cwd: &Path) -> Option<PathBuf> {
    agent::resolve(command.first()?, cwd, std::env::var("PATH").ok().as_deref())
}

/// The agent CMD is, found as `executable` finds it; never an executable inside `untrusted` (the
/// project, the current directory): a project's own `node_modules/@anthropic-ai/claude-code` is
/// the project's code, and gets no agent's profile.
fn detect(command: &[String], cwd: &Path, untrusted: &[&Path]) -> Option<agent::Detected> {
    let found = agent::detect(command.first()?, cwd, std::env::var("PATH").ok().as_deref())?;
    (!untrusted.iter().any(|dir| inside(&found, dir))).then_some(found)
}

fn inside(found: &agent::Detected, dir: &Path) -> bool {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    found.executable.starts_with(dir)
}
