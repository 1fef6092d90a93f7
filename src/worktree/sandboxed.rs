//! git in a job's repository, the only way isolate runs it there after the job ran: inside a sandbox
//! of its own (Landlock: the worktree and a private TMPDIR writable, nothing else; every capability
//! dropped; scopes), so that whatever the job planted (hooks, filters, fsmonitor) runs confined to
//! the worktree, as the job itself did. Used by `merge` and `sync`, which write the worktree.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use crate::error::{Error, Result};
use crate::git;
use crate::sandbox::{plan, policy};
use crate::supervise::{spawn, tree};
use crate::worktree::project::Project;

/// How long one sandboxed git command may run (a merge with the project's hooks included).
const LIMIT: Duration = Duration::from_secs(600);

/// What the command printed, and its status (128+N for signal N).
pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// `git ARGS` in `worktree`, sandboxed, with no terminal and no prompts.
pub fn git(project: &Project, worktree: &Path, args: &[&str]) -> Result<Output> {
    let tmp = tempfile::Builder::new()
        .prefix("isolate-git-")
        .tempdir()
        .map_err(|e| Error::Other(format!("cannot create a temporary directory: {e}")))?;
    let loaded = policy::load("default")?;
    let writable = [worktree.to_path_buf(), tmp.path().to_path_buf()];
    let readable = [
        project.top.clone(),
        project.git_dir.clone(),
        project.objects.clone(),
    ];
    let job = plan::Job {
        writable: &writable,
        readable: &readable,
        allow_write: &[],
    };
    let (rules, _, _) = plan::build(&loaded, &job, false)?;
    // The caller's environment (identity, global config) less what would point git elsewhere.
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            !git::LOCATION_VARS
                .iter()
                .chain(git::REDIRECTING_VARS)
                .any(|r| k == r)
        })
        .collect();
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
    let pid = spawn::spawn(spawn::Spawn {
        argv,
        cwd: worktree.to_path_buf(),
        env,
        rules,
        stdin: Stdio::null(),
        stdout: Stdio::from(out_write),
        stderr: Stdio::from(err_write),
        cgroup_procs: None,
        terminal: None,
    })?
    .pid;
    let stdout = reader(out_read);
    let stderr = reader(err_read);
    let status = wait(pid, LIMIT);
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

/// Waits for `pid` (a child of this process), killing it after `limit`; the status as a shell
/// reports it.
pub fn wait(pid: Pid, limit: Duration) -> i32 {
    let deadline = Instant::now() + limit;
    // SAFETY: pidfd_open on our own unreaped child.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0) };
    // SAFETY: a fresh descriptor nothing else owns.
    let pidfd =
        (raw >= 0).then(|| unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw as i32) });
    loop {
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, sig, _)) => return 128 + sig as i32,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return 125,
        }
        if Instant::now() >= deadline {
            tree::signal_all(Pid::this(), Signal::SIGKILL);
            let _ = kill(pid, Signal::SIGKILL);
        }
        match &pidfd {
            Some(fd) => {
                let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
                let _ = poll(&mut fds, PollTimeout::from(1000u16));
            }
            None => thread::sleep(Duration::from_millis(5)),
        }
    }
}
