//! A ref transaction in the project whose git is started ahead and told to commit later (`git
//! update-ref --stdin` with `start`, then `prepare` and `commit` together): git's start-up (its
//! exec, its configuration) overlaps what the caller does meanwhile, while the locks are taken and
//! every old value checked only at `commit`, exactly as a plain `update-ref --stdin` run then would.
//! Whatever goes wrong (git too old for the verbs, a value that moved, a lock held, no answer in
//! time) reads as not committed; a transaction dropped without `commit` is aborted, having locked
//! nothing (git aborts a started transaction at the end of its input).

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::hygiene::command;
use super::wait::{wait, TIMEOUT};

/// A transaction git has started, its changes queued: nothing locked, nothing checked yet.
pub struct Started {
    cmd: Command,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

/// Starts `git update-ref --stdin` in `dir` and queues `instructions` (lines such as
/// `delete REF OLD`); `commit` then applies them, or none.
pub fn start(dir: &Path, instructions: &str) -> Option<Started> {
    let mut cmd = command(dir);
    cmd.args(["update-ref", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().ok()?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let text = format!("start\n{instructions}");
    if stdin.write_all(text.as_bytes()).is_err() {
        drop(stdin);
        let _ = child.wait();
        return None;
    }
    Some(Started {
        cmd,
        child,
        stdin: Some(stdin),
        stdout: BufReader::new(stdout),
    })
}

impl Started {
    /// Prepares (the locks taken, the old values checked) and commits: true when git says every
    /// change was made; false when none was.
    pub fn commit(mut self) -> bool {
        let sent = self
            .stdin
            .as_mut()
            .is_some_and(|stdin| stdin.write_all(b"prepare\ncommit\n").is_ok());
        let mut told = Vec::new();
        while sent && told.len() < 3 {
            match read_line(&mut self, TIMEOUT) {
                Some(line) => told.push(line),
                None => break,
            }
        }
        self.stdin = None;
        let status = wait(&mut self.child, &self.cmd, TIMEOUT);
        told == ["start: ok", "prepare: ok", "commit: ok"] && status.is_ok_and(|s| s.success())
    }
}

impl Drop for Started {
    /// Not committed: the end of git's input aborts the transaction; git is waited for.
    fn drop(&mut self) {
        if self.stdin.take().is_some() || self.child.try_wait().ok().flatten().is_none() {
            let _ = wait(&mut self.child, &self.cmd, TIMEOUT);
        }
    }
}

/// The next line git writes (without its newline), waiting at most `limit`; `None` at the end of
/// its output, on an error or past the limit (git is then killed).
fn read_line(t: &mut Started, limit: Duration) -> Option<String> {
    let until = Instant::now() + limit;
    while t.stdout.buffer().is_empty() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let _ = t.child.kill();
            return None;
        }
        let timeout = PollTimeout::try_from(left.as_millis().max(1)).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(t.stdout.get_ref().as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => break,
            Err(_) => return None,
        }
    }
    let mut line = String::new();
    match t.stdout.read_line(&mut line) {
        Ok(n) if n > 0 && line.ends_with('\n') => {
            line.pop();
            Some(line)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
