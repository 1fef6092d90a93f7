//! git in a job's repository, the only way isolate runs it there after the job ran: inside a sandbox
//! of its own under the job's own policy (its reads and its network; writable only the worktree and
//! a private TMPDIR; every capability dropped; scopes; the seccomp layer), supervised like a job
//! (supervise/helper/: its whole tree stopped before this returns), so that whatever the job
//! planted (hooks, filters, fsmonitor, a daemon they start) runs confined as the job did and dies
//! with the command. Used by `merge` and `sync`, which write the worktree.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::sandbox::{plan, policy};
use crate::supervise::helper;
use crate::supervise::spawn::{self, Stdio};

pub use crate::supervise::helper::Output;

/// How long one sandboxed git command may run (a merge with the project's hooks included).
const LIMIT: Duration = Duration::from_secs(600);

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
        .map_err(|e| Error::System("cannot create a temporary directory", e))?;
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
    loaded
        .policy
        .environment
        .apply(&mut env, &[("TMPDIR", tmp.path().as_os_str())]);
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
    let mut argv = vec!["git".to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let job = spawn::Spawn {
        argv,
        cwd: worktree.to_path_buf(),
        env,
        rules,
        stdin: Stdio::null(),
        stdout: Stdio::null(),
        stderr: Stdio::null(),
        cgroup_procs: None,
        limit_procs: Vec::new(),
        terminal: None,
    };
    helper::output(job, "git", LIMIT)
}
