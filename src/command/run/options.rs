//! `run`'s command line, resolved once into what the rest of `run` asks of it: where the job
//! starts, how it is attached, how isolate speaks. Nothing after this reads the clap arguments, and
//! nothing rewrites these options: what is resolved later (the timeout, from the policy) is
//! resolved where its inputs are.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::git::remote::PullRequest;

/// What a fresh worktree is cut from, as the command line says.
pub(super) enum BaseChoice {
    /// The configuration's `base` (`head`, the caller's HEAD, by default; or `fresh`).
    Configured,
    /// `--base REV`.
    Rev(String),
    /// `--base fresh`: the remote's default branch, fetched first.
    Fresh,
    /// `--pr`: a pull or merge request's head, fetched first.
    PullRequest(PullRequest),
}

/// Where the job runs.
pub(super) enum Start {
    /// In the current directory.
    Here,
    /// In a fresh worktree, cut from `base`.
    Worktree { base: BaseChoice },
    /// In the kept worktree of the ended job named so.
    Resume(String),
}

/// How the job is attached to the caller.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// On the caller's terminal; `pty`: on one of its own, relayed (unless `--no-pty`).
    Foreground { pty: bool },
    /// Detached (`--bg`): its output goes to its log.
    Background,
}

/// What isolate itself says on the way.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Speech {
    /// The start line, the end block and hints, on stderr.
    Human,
    /// Nothing (`-q`).
    Quiet,
    /// JSON lines (`--json`, which wins over `-q`).
    Json,
}

impl Speech {
    pub(super) fn json(self) -> bool {
        self == Speech::Json
    }
}

/// `--tty`: the job's terminal held by its background supervisor.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Tty {
    /// The caller's window size, when it has a terminal: the job's starts the same.
    pub(super) size: Option<(u16, u16)>,
    /// Without `--bg`: the caller attaches at once.
    pub(super) attach: bool,
}

pub(super) struct RunOptions {
    pub(super) command: Vec<String>,
    /// `--name`, as the user's bytes (the job's id is slugged from them).
    pub(super) name: Option<OsString>,
    pub(super) start: Start,
    pub(super) mode: Mode,
    /// `--tty` (the mode is then `Background`).
    pub(super) tty: Option<Tty>,
    pub(super) speech: Speech,
    /// `--timeout`; the job's own limit is the shorter of it and its policies' (`Prepared::timeout`).
    pub(super) timeout: Option<Duration>,
    /// `--memory`, `--cpus`, `--pids`.
    pub(super) limits: crate::job::record::JobLimits,
    /// `--push REMOTE`.
    pub(super) push: Option<String>,
    pub(super) grace: Duration,
    pub(super) policy: Option<String>,
    pub(super) allow_write: Vec<PathBuf>,
    pub(super) allow_net: Vec<String>,
    /// False with `--no-sandbox`.
    pub(super) sandboxed: bool,
    pub(super) keep: bool,
    pub(super) env: Vec<(String, String)>,
    pub(super) report: Option<PathBuf>,
}

impl From<RunArgs> for RunOptions {
    fn from(args: RunArgs) -> RunOptions {
        let start = match (args.resume, args.worktree) {
            (Some(job), _) => Start::Resume(job),
            (None, true) => Start::Worktree {
                base: match (args.pr, args.base) {
                    (Some(pr), _) => BaseChoice::PullRequest(pr),
                    (None, Some(rev)) if rev == "fresh" => BaseChoice::Fresh,
                    (None, Some(rev)) => BaseChoice::Rev(rev),
                    (None, None) => BaseChoice::Configured,
                },
            },
            (None, false) => Start::Here,
        };
        let mode = match args.bg || args.tty {
            true => Mode::Background,
            false => Mode::Foreground { pty: !args.no_pty },
        };
        let tty = args.tty.then(|| Tty {
            size: crate::supervise::pty::winsize_of(std::io::stdin().as_fd()),
            attach: !args.bg,
        });
        let speech = match (args.json, args.quiet) {
            (true, _) => Speech::Json,
            (false, true) => Speech::Quiet,
            (false, false) => Speech::Human,
        };
        RunOptions {
            command: args.command,
            name: args.name,
            start,
            mode,
            tty,
            speech,
            timeout: args.timeout,
            limits: crate::job::record::JobLimits {
                memory: args.memory,
                millicpus: args.cpus,
                pids: args.pids,
            },
            grace: args.grace,
            push: args.push,
            policy: args.policy,
            allow_write: args.allow_write,
            allow_net: args.allow_net,
            sandboxed: !args.no_sandbox,
            keep: args.keep,
            env: args.env,
            report: args.report,
        }
    }
}

impl RunOptions {
    pub(super) fn background(&self) -> bool {
        self.mode == Mode::Background
    }

    /// The name a record gives the job (`--name`, as text).
    pub(super) fn display_name(&self) -> Option<String> {
        self.name.as_ref().map(|n| n.to_string_lossy().into_owned())
    }
}
