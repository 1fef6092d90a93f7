//! A ref transaction in the project prepared ahead and committed later (`git update-ref --stdin`
//! with `start`, `prepare`, `commit`): git takes the locks and checks every old value at
//! `prepare`, then holds the locks until `commit`, so nothing can move those refs in between and
//! the commit deletes exactly what was checked. Whatever goes wrong (git too old for the verbs, a
//! value that moved, a lock held, no answer in time) reads as not prepared and nothing is changed;
//! a transaction dropped without `commit` is aborted (git aborts a started transaction at the end of
//! its input).

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::hygiene::command;
use super::wait::{wait, TIMEOUT};

/// A transaction git has prepared: its locks held, its old values checked.
pub struct Prepared {
    cmd: Command,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

/// Starts `git update-ref --stdin` in `dir` with `instructions` (lines such as `delete REF OLD`)
/// and asks it to prepare; `answer` then says whether it did. The preparation runs while the caller
/// does something else.
pub fn start(dir: &Path, instructions: &str) -> Option<Starting> {
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
    let text = format!("start\n{instructions}prepare\n");
    if stdin.write_all(text.as_bytes()).is_err() {
        drop(stdin);
        let _ = child.wait();
        return None;
    }
    Some(Starting(Prepared {
        cmd,
        child,
        stdin: Some(stdin),
        stdout: BufReader::new(stdout),
    }))
}

/// A transaction asked to prepare, not yet answered.
pub struct Starting(Prepared);

impl Starting {
    /// git's answer: the prepared transaction, or `None` (git has then ended, nothing changed).
    pub fn answer(mut self) -> Option<Prepared> {
        let told = read_line(&mut self.0, TIMEOUT);
        (told.as_deref() == Some("start: ok")
            && read_line(&mut self.0, TIMEOUT).as_deref() == Some("prepare: ok"))
        .then_some(self.0)
    }
}

impl Prepared {
    /// Commits: true when git says every change was made.
    pub fn commit(mut self) -> bool {
        let sent = self
            .stdin
            .as_mut()
            .is_some_and(|stdin| stdin.write_all(b"commit\n").is_ok());
        let told = sent.then(|| read_line(&mut self, TIMEOUT)).flatten();
        self.stdin = None;
        let status = wait(&mut self.child, &self.cmd, TIMEOUT);
        told.as_deref() == Some("commit: ok") && status.is_ok_and(|s| s.success())
    }
}

impl Drop for Prepared {
    /// Not committed: the end of git's input aborts the transaction; git is waited for.
    fn drop(&mut self) {
        if self.stdin.take().is_some() || self.child.try_wait().ok().flatten().is_none() {
            let _ = wait(&mut self.child, &self.cmd, TIMEOUT);
        }
    }
}

/// The next line git writes (without its newline), waiting at most `limit`; `None` at the end of
/// its output, on an error or past the limit (git is then killed).
fn read_line(t: &mut Prepared, limit: Duration) -> Option<String> {
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
