//! A new job: its policy chosen (`--policy`, the configuration's, the agent's profile, `default`),
//! checked against this kernel before anything is made, then its id claimed (or the one the queue
//! claimed taken up), its record directory and TMPDIR made, and, with `--worktree`, its worktree
//! created.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::config;
use crate::error::{Error, Result};
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::job::{store, worktrees};
use crate::sandbox::made::Made;
use crate::sandbox::{agent, plan, policy};
use crate::worktree::create;
use crate::worktree::{checked_out, policy_ignores};

use super::allow_write::check_allow_write;
use super::detect::{detect, executable, inside, slug_source};
use super::journal;
use super::options::{BaseChoice, RunOptions, Speech, Start};
use super::prepared::{Chosen, JobWorktree, Prepared};
use super::queued::Claimed;
use super::target::{register_root, worktree_target, Fetch, Target};
use crate::git::remote;

/// How many fresh ids to draw before giving up (each draw collides with 1/65536 chance per job).
pub(super) const ID_ATTEMPTS: usize = 64;

/// What a new job is, decided before anything is made.
struct Decided {
    cwd: PathBuf,
    policy: policy::Loaded,
    chosen: Chosen,
    executable: Option<PathBuf>,
    agent: Option<agent::Detected>,
}

/// A new job prepared; with `claimed`, under the id and in the directory the queue claimed for it,
/// from what was resolved when it was queued.
pub(super) fn prepare(options: &RunOptions, claimed: Option<Claimed>) -> Result<Prepared> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::io("cannot read the current directory", ".", e))?;
    let state = store::state_dir()?;
    let resolved = claimed.as_ref().and_then(|c| c.resolved.as_ref());
    let target = match &options.start {
        Start::Worktree { base } => Some(worktree_target(&cwd, &state, base, resolved)?),
        Start::Here => {
            in_place(&cwd, &state)?;
            None
        }
        Start::Resume(_) => None,
    };
    if !options.allow_write.is_empty() {
        allow_write(options, &state, &cwd, target.as_ref())?;
    }
    let decided = decide(options, &state, cwd, target.as_ref())?;
    // Fail closed before anything is made: every feature the policy requires, on this kernel.
    if options.sandboxed {
        plan::check_kernel(&decided.policy)?;
    }
    if let Some(t) = &target {
        fs::create_dir_all(&t.key_dir)
            .map_err(|e| Error::io("cannot create the worktree directory", &t.key_dir, e))?;
        // Known before the worktree is made: `run --worktree` inside it is refused from then on.
        register_root(&state, &t.root)?;
        config::exclude_root_in_project(&t.project, &t.root)?;
    }
    claim(options, &state, decided, target, claimed)
}

/// A job run in place: not in another job's worktree, found from paths before git runs there (to
/// find the project), since what git would read there is the job's (its config, its
/// `.isolate.toml`); `--resume` is how to work in it.
pub(super) fn in_place(cwd: &Path, state: &Path) -> Result<()> {
    match worktrees::of_another_job(cwd, state) {
        None => Ok(()),
        Some(written @ worktrees::Written::Worktree(_)) => Err(Error::Usage(format!(
            "{written}; run `isolate run --resume JOB -- CMD` to work in it under that job's policy"
        ))),
        Some(written) => Err(Error::Usage(format!(
            "{written}; run jobs from elsewhere (set ISOLATE_HOME to move the state directory)"
        ))),
    }
}

/// `--allow-write`, against the places of this run (with `--worktree`, its worktree root).
fn allow_write(
    options: &RunOptions,
    state: &Path,
    cwd: &Path,
    target: Option<&Target>,
) -> Result<()> {
    let paths = &options.allow_write;
    if let Some(t) = target {
        return check_allow_write(paths, state, Some(&t.project), &t.root, true);
    }
    let project = Project::discover(cwd).ok();
    let root = match &project {
        Some(p) => config::load(Some(p))?.worktree_root(state, p)?,
        None => state.join("worktrees"),
    };
    check_allow_write(paths, state, project.as_ref(), &root, false)
}

/// The job's policy and why, and what CMD is.
fn decide(
    options: &RunOptions,
    state: &Path,
    cwd: PathBuf,
    target: Option<&Target>,
) -> Result<Decided> {
    let config = match target {
        Some(t) => t.config.clone(),
        None => config::load(None)?,
    };
    let project_top = || match target {
        Some(t) => Some(t.project.top.clone()),
        None => Project::discover(&cwd).ok().map(|p| p.top),
    };
    // --policy, then the configuration's, then the agent's when CMD is a known one, then default.
    let executable = executable(&options.command, &cwd);
    // The project is looked up (a git process) only when CMD is an agent at all.
    let agent = detect(executable.as_deref(), &[&cwd])
        .filter(|found| !project_top().is_some_and(|top| inside(found, &top)));
    let (policy_name, chosen) = match (&options.policy, &config.config.policy, &agent) {
        (Some(name), _, _) => (name.clone(), Chosen::Given),
        (None, Some(name), _) => (name.clone(), Chosen::Configured),
        (None, None, Some(found)) => (found.agent.profile.to_string(), Chosen::Agent),
        (None, None, None) => ("default".to_string(), Chosen::Default),
    };
    let policy = policy::load(&policy_name)?;
    // The installation a policy may make readable is never the project's, the worktrees' or the
    // current directory's: a `pyvenv.cfg` there would say what it is.
    let executable = executable.filter(|exe| {
        if !policy.policy.filesystem.installation {
            return false;
        }
        let mut untrusted = vec![cwd.clone(), state.to_path_buf()];
        match target {
            Some(t) => untrusted.extend([t.project.top.clone(), t.root.clone()]),
            None => untrusted.extend(project_top()),
        }
        !untrusted.iter().any(|dir| {
            let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            exe.starts_with(dir)
        })
    });
    Ok(Decided {
        cwd,
        policy,
        chosen,
        executable,
        agent,
    })
}

/// The bytes a new job's id is slugged from: `--name`, else `pr-N` for `--pr N`, else CMD's name.
pub(super) fn id_source(options: &RunOptions) -> Vec<u8> {
    if let Some(name) = &options.name {
        return name.as_encoded_bytes().to_vec();
    }
    match &options.start {
        // A pull request's job is named after it unless named otherwise.
        Start::Worktree {
            base: BaseChoice::PullRequest(pr),
        } => format!("pr-{}", pr.number).into_bytes(),
        _ => slug_source(&options.command).to_vec(),
    }
}

/// Claims a fresh id (its record directory and TMPDIR), or takes the one the queue `claimed`, and,
/// with a target, makes the worktree; an id taken in the project (its branch, or its directory) is
/// never reused: another is drawn (a claimed one cannot be: the job fails).
fn claim(
    options: &RunOptions,
    state: &Path,
    decided: Decided,
    mut target: Option<Target>,
    mut claimed: Option<Claimed>,
) -> Result<Prepared> {
    let name_bytes = id_source(options);
    let attempts = match claimed {
        Some(_) => 1,
        None => ID_ATTEMPTS,
    };
    for _ in 0..attempts {
        let (id, job_dir) = match claimed.as_mut() {
            Some(c) => c.hand_over(),
            None => {
                let id = JobId::generate(&name_bytes);
                let Some(job_dir) = store::claim(state, &id)? else {
                    continue;
                };
                (id, job_dir)
            }
        };
        let queued_at = claimed.as_ref().and_then(|c| c.queued_at.clone());
        // Owns the record directory from here: dropped on a failure, it undoes what was made.
        let mut prepared = prepared(id, job_dir, &decided, queued_at);
        // With the job's runtime directory in it (XDG_RUNTIME_DIR, environment.rs).
        let made = fs::DirBuilder::new()
            .mode(0o700)
            .create(&prepared.tmpdir)
            .and_then(|()| {
                fs::DirBuilder::new()
                    .mode(0o700)
                    .create(prepared.tmpdir.join("run"))
            });
        if let Err(e) = made {
            return Err(Error::io(
                "cannot create the job's TMPDIR",
                &prepared.tmpdir,
                e,
            ));
        }
        let Some(t) = target else {
            return Ok(prepared);
        };
        let path = t.key_dir.join(prepared.id.as_str());
        // On record from the start: a supervisor killed while it creates the worktree leaves a job
        // that reads as `lost`, naming what it was making, never an unexplained directory.
        journal::creating(options, &prepared, &t, &path)?;
        let include = t.config.config.include.as_deref().unwrap_or_default();
        let fill = create::Fill {
            include,
            confined: options.sandboxed.then_some(&decided.policy),
            progress: crate::sys::progress::wanted(),
            ignore: &decided.policy.policy.worktree.ignore,
        };
        if let Some(mut created) = create::create(&t.project, &prepared.id, &path, &t.base, fill)? {
            checked_out::note(&prepared.job_dir, created.checked_out);
            policy_ignores::note(&prepared.job_dir, fill.ignore);
            created.project_branch = t.project_branch.clone();
            (created.pull_request, created.started_from) = match &t.fetched {
                Some(Fetch::PullRequest { number, fetched }) => (
                    Some(*number),
                    Some(format!("{} {}", remote::REMOTE, fetched.source)),
                ),
                Some(Fetch::Fresh(fetched)) => {
                    (None, Some(format!("{} {}", remote::REMOTE, fetched.source)))
                }
                Some(Fetch::FellBack(why)) => {
                    if options.speech == Speech::Human {
                        say!(
                            "isolate: warning: {why}; cut from HEAD instead, as base_fallback = \"head\" allows"
                        );
                    }
                    (None, None)
                }
                None => (None, None),
            };
            prepared.setup = t.config.config.setup.clone();
            prepared.cwd = cwd_inside(&t.project, &path);
            prepared.worktree = Some(JobWorktree {
                project: t.project,
                created,
                key_dir: t.key_dir,
            });
            return Ok(prepared);
        }
        // Taken in the project (or its directory exists): never reuse, never adopt (`prepared`,
        // dropped, forgets the record directory).
        target = Some(t);
    }
    match claimed {
        Some(c) => Err(Error::Job {
            job: c.id.to_string(),
            why: format!(
                "cannot start: its id is taken in the project (branch {} or its worktree \
                 directory exists)",
                c.id.branch()
            ),
        }),
        None => Err(Error::NoFreeId(ID_ATTEMPTS)),
    }
}

/// CMD's directory in the worktree: the caller's subdirectory of the project, when the worktree has
/// it.
fn cwd_inside(project: &Project, path: &Path) -> PathBuf {
    // `join("")` would add a trailing slash the worktree's path has not.
    let inside = match project.prefix.as_os_str().is_empty() {
        true => path.to_path_buf(),
        false => path.join(&project.prefix),
    };
    if inside.is_dir() {
        inside
    } else {
        path.to_path_buf()
    }
}

fn prepared(id: JobId, job_dir: PathBuf, decided: &Decided, queued_at: Option<String>) -> Prepared {
    Prepared {
        id,
        tmpdir: job_dir.join("tmp"),
        job_dir,
        cwd: decided.cwd.clone(),
        policy: decided.policy.clone(),
        narrowing: None,
        worktree: None,
        resumed: None,
        setup: None,
        chosen: decided.chosen.clone(),
        executable: decided.executable.clone(),
        agent: decided.agent.clone(),
        made: Made::default(),
        owned_elsewhere: false,
        queued_at,
    }
}
