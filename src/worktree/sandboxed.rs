//! git in a job's repository, the only way isolate runs it there after the job ran: inside a sandbox
//! of its own under the job's own policy (its reads and its network; writable only the worktree and
//! a private TMPDIR; every capability dropped; scopes; the seccomp layer), supervised like a job
//! (supervise/helper.rs: its whole tree stopped before this returns), so that whatever the job
//! planted (hooks, filters, fsmonitor, a daemon they start) runs confined as the job did and dies
//! with the command. Used by `merge` and `sync`, which write the worktree.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::sandbox::{plan, policy};
use crate::supervise::helper::Helper;
use crate::supervise::spawn;

/// How long one sandboxed git command may run (a merge with the project's hooks included).
const LIMIT: Duration = Duration::from_secs(600);

/// What the command printed, and its status (128+N for signal N).
pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `git ARGS` in `worktree`, sandboxed under `loaded` (the job's recorded policy), with no terminal
/// and no prompts.
pub fn git(
    project: &Project,
    worktree: &Path,
    loaded: &policy::Loaded,
    args: &[&str],
) -> Result<Output> {
    let tmp = tempfile::Builder::new()
        .prefix("isolate-git-")
        .tempdir()
        .map_err(|e| Error::Other(format!("cannot create a temporary directory: {e}")))?;
    let writable = [tmp.path().to_path_buf()];
    let readable = [
        project.top.clone(),
        project.git_dir.clone(),
        project.objects.clone(),
    ];
    let job = plan::Job {
        worktree: Some(worktree),
        writable: &writable,
        readable: &readable,
        allow_write: &[],
        installation: &[],
    };
    let rules = plan::build(loaded, &job, false)?.rules;
    // The caller's environment (identity, global config) as the job's policy makes it for the job
    // (what it removes, such as tokens, never reaches what the job planted), less what would point
    // git elsewhere.
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !k.to_string_lossy().starts_with("ISOLATE_"))
        .collect();
    loaded.policy.environment.apply(&mut env);
    env.retain(|(k, _)| {
        !git::LOCATION_VARS
            .iter()
            .chain(git::REDIRECTING_VARS)
            .any(|r| k == r)
    });
    for (k, v) in [
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_EDITOR", "true"),
        ("GIT_MERGE_AUTOEDIT", "no"),
        ("LC_ALL", "C"),
    ] {
        env.push((k.into(), v.into()));
    }
    env.push(("TMPDIR".into(), tmp.path().into()));
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let mut argv = vec!["git".to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let helper = Helper::start(
        spawn::Spawn {
            argv,
            cwd: worktree.to_path_buf(),
            env,
            rules,
            stdin: Stdio::null(),
            stdout: Stdio::from(out_write),
            stderr: Stdio::from(err_write),
            cgroup_procs: None,
            terminal: None,
        },
        "git",
    )?;
    let stdout = reader(out_read);
    let stderr = reader(err_read);
    let status = helper.finish(LIMIT);
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| Error::Other(format!("cannot create a pipe: {e}")))
}

fn reader(fd: OwnedFd) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        let _ = std::fs::File::from(fd).read_to_string(&mut text);
        text
    })
}
