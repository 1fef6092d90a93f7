//! Running a project-side git to the end: its output whatever its status, or a failure that names
//! the command and carries git's own message. Never through a shell, always through `command`.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::thread;

use super::hygiene::command;
use super::wait::{collect, TIMEOUT};
use crate::error::{Error, Result};

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
    let (cmd, out) = exec(dir, args, None)?;
    checked(&cmd, out)
}

/// Runs `git -C dir ARGS` with `input` on stdin and fails unless it exits 0.
pub fn run_with_input<I, S>(dir: &Path, args: I, input: &[u8]) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let (cmd, out) = exec(dir, args, Some(input))?;
    checked(&cmd, out)
}

/// Runs `git -C dir ARGS` and returns its output whatever its status.
pub fn try_run<I, S>(dir: &Path, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Ok(exec(dir, args, None)?.1)
}

/// Runs `git -C dir ARGS` with `input` on stdin and returns its output whatever its status.
pub fn try_run_with_input<I, S>(dir: &Path, args: I, input: &[u8]) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Ok(exec(dir, args, Some(input))?.1)
}

/// `cmd` (made by `command`, with its arguments and environment) run to the end; fails unless it
/// exits 0.
pub fn run_command(mut cmd: Command) -> Result<Output> {
    let out = output(&mut cmd, None)?;
    checked(&cmd, out)
}

/// `cmd` run to the end: what it printed, whatever its status.
pub fn collect_output(cmd: &mut Command) -> Result<Output> {
    output(cmd, None)
}

/// `cmd` run to the end with its stderr on isolate's (a terminal: git's progress shows there),
/// its stdout dropped; fails unless it exits 0 (git's message is then on the terminal already).
pub fn run_on_terminal(mut cmd: Command) -> Result<()> {
    cmd.stdout(Stdio::null()).stderr(Stdio::inherit());
    let mut child = cmd.spawn().map_err(|e| Error::Git {
        args: describe(&cmd),
        code: None,
        stderr: format!("cannot start git: {e}"),
    })?;
    let status = super::wait(&mut child, &cmd, TIMEOUT)?;
    match status.success() {
        true => Ok(()),
        false => Err(Error::git(
            describe(&cmd),
            status.code(),
            b"(its message is above)",
        )),
    }
}

/// `git -C dir ARGS` run to the end (with `input` on stdin): the command, for messages, and what it
/// printed.
fn exec<I, S>(dir: &Path, args: I, input: Option<&[u8]>) -> Result<(Command, Output)>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut cmd = command(dir);
    cmd.args(args);
    let out = output(&mut cmd, input.map(<[u8]>::to_vec))?;
    Ok((cmd, out))
}

/// Fails with the command line and git's own message unless `out` is a success.
pub fn checked(cmd: &Command, out: Output) -> Result<Output> {
    if out.status.success() {
        return Ok(out);
    }
    Err(Error::git(describe(cmd), out.status.code(), &out.stderr))
}

/// The arguments after the hygiene flags and the `-c` options that follow them (bounds, checks),
/// for error messages.
pub fn describe(cmd: &Command) -> String {
    let args: Vec<_> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut from = args
        .iter()
        .position(|a| a == "--no-pager")
        .map_or(0, |i| i + 1);
    while args.get(from).is_some_and(|a| a == "-c") && from + 2 <= args.len() {
        from += 2;
    }
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
