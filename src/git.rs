//! The one runner for git in the *project* (the user's repository), with the hygiene of
//! spec/worktrees.md: hooks and fsmonitor off, no pager, no prompts, no shell, a timeout, and none of
//! the caller's `GIT_DIR`-style variables. Never point it at a job's repository after the job ran:
//! git there would run whatever the job planted (see worktree/inspect.rs for how those are read).

use std::ffi::OsStr;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::sys::pidfd::{self, PidFd};

/// Long enough for pack-objects and checkout of a large repository on a slow disk.
pub const TIMEOUT: Duration = Duration::from_secs(600);

/// Variables that point git at another repository than the one of its directory.
pub const LOCATION_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
];

/// Variables that would redirect git away from the directory we name, or configure it from the
/// environment (with `LOCATION_VARS`).
pub const REDIRECTING_VARS: &[&str] = &[
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// `git -C dir` with the hygiene flags, ready for arguments.
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .arg("--no-pager")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_ASKPASS", "true")
        .env("SSH_ASKPASS", "true")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    for var in LOCATION_VARS.iter().chain(REDIRECTING_VARS) {
        cmd.env_remove(var);
    }
    cmd
}

/// What a finished git command printed.
pub struct Output {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub status: ExitStatus,
}

impl Output {
    /// stdout as text, without the trailing newline.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout)
            .trim_end_matches('\n')
            .to_string()
    }
}

/// Runs `git -C dir ARGS` and fails unless it exits 0.
pub fn run<I, S>(dir: &Path, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(dir);
    cmd.args(args);
    let out = output(&mut cmd, None)?;
    checked(&cmd, out)
}

/// Runs `git -C dir ARGS` with `input` on stdin and fails unless it exits 0.
pub fn run_with_input<I, S>(dir: &Path, args: I, input: &[u8]) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(dir);
    cmd.args(args);
    let out = output(&mut cmd, Some(input.to_vec()))?;
    checked(&cmd, out)
}

/// Runs `git -C dir ARGS` and returns its output whatever its status.
pub fn try_run<I, S>(dir: &Path, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(dir);
    cmd.args(args);
    output(&mut cmd, None)
}

/// Fails with the command line and git's own message unless `out` is a success.
pub fn checked(cmd: &Command, out: Output) -> Result<Output> {
    if out.status.success() {
        return Ok(out);
    }
    Err(Error::git(describe(cmd), out.status.code(), &out.stderr))
}

/// The arguments after the hygiene flags, for error messages.
pub fn describe(cmd: &Command) -> String {
    let args: Vec<_> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let from = args
        .iter()
        .position(|a| a == "--no-pager")
        .map_or(0, |i| i + 1);
    args[from..].join(" ")
}

/// Spawns `cmd` with piped output, feeds `input`, and waits at most `TIMEOUT`.
fn output(cmd: &mut Command, input: Option<Vec<u8>>) -> Result<Output> {
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| Error::Git {
        args: describe(cmd),
        code: None,
        stderr: format!("cannot start git: {e}"),
    })?;
    let writer = input.and_then(|bytes| {
        let mut stdin = child.stdin.take()?;
        Some(thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        }))
    });
    let out = collect(&mut child, cmd, TIMEOUT)?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    Ok(out)
}

/// Reads a spawned child's stdout and stderr to the end and waits for it, killing it after `timeout`.
pub fn collect(child: &mut Child, cmd: &Command, timeout: Duration) -> Result<Output> {
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
    let status = wait(child, timeout).map_err(|reason| Error::Git {
        args: describe(cmd),
        code: None,
        stderr: reason,
    })?;
    Ok(Output {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        status,
    })
}

/// Waits for `child`, killing it after `timeout`. The wait blocks on a pidfd (readable when the child
/// exits), so a git call costs what git costs, not a polling interval.
pub fn wait(child: &mut Child, timeout: Duration) -> std::result::Result<ExitStatus, String> {
    let pidfd = PidFd::open(child.id() as i32, 0).ok();
    let mut failed = None;
    let status = pidfd::wait_exit(
        pidfd.as_ref(),
        timeout,
        Duration::from_millis(1),
        || match child.try_wait() {
            Ok(Some(status)) => Some(Some(status)),
            Ok(None) => None,
            Err(e) => {
                failed = Some(e.to_string());
                Some(None)
            }
        },
    );
    match (status, failed) {
        (_, Some(error)) => Err(error),
        (Some(Some(status)), None) => Ok(status),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!(
                "timed out after {}",
                humantime::format_duration(timeout)
            ))
        }
    }
}

/// Runs `git -C dir ARGS` with `input` on stdin and returns its output whatever its status.
pub fn try_run_with_input<I, S>(dir: &Path, args: I, input: &[u8]) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(dir);
    cmd.args(args);
    output(&mut cmd, Some(input.to_vec()))
}

/// git's version, as `(major, minor, patch)`.
pub fn version() -> Result<(u32, u32, u32)> {
    let out = Command::new("git")
        .arg("--version")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Other(format!("cannot run git --version: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_version(&text)
        .ok_or_else(|| Error::Other(format!("git --version printed {:?}", text.trim())))
}

/// "git version 2.47.3" (and vendor suffixes such as ".windows.1" or " (Apple Git-146)").
fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let number = text.trim().strip_prefix("git version ")?;
    let mut parts = number
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().flatten().unwrap_or(0);
    Some((major, minor, patch))
}

/// Fails clearly unless git is at least `major.minor`, which `what` needs.
pub fn require(major: u32, minor: u32, what: &str) -> Result<()> {
    let found = version()?;
    if (found.0, found.1) >= (major, minor) {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "{what} needs git {major}.{minor} or later; this git is {}.{}.{}",
        found.0, found.1, found.2
    )))
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn versions_are_read_with_vendor_suffixes() {
        assert_eq!(parse_version("git version 2.47.3\n"), Some((2, 47, 3)));
        assert_eq!(
            parse_version("git version 2.38.0.windows.1"),
            Some((2, 38, 0))
        );
        assert_eq!(
            parse_version("git version 2.39.5 (Apple Git-154)"),
            Some((2, 39, 5))
        );
        assert_eq!(parse_version("git version 3.0"), Some((3, 0, 0)));
        assert_eq!(parse_version("hub version 2.14"), None);
    }
}
