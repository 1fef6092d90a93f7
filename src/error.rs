//! The one error type of isolate. Each variant carries what failed and, where a user can act, a hint;
//! `main` prints the chain once. `exit_code` maps an error to the status of `spec/cli.md`: 125 for
//! isolate's own failures in `run`, 126/127 for a command that cannot be executed or is not found.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),

    #[error("not a git repository: {0}")]
    NotARepository(PathBuf),

    #[error(
        "the repository {0} has no commit yet; isolate needs a first commit to cut a worktree from"
    )]
    NoCommit(PathBuf),

    #[error("{what}: {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    #[error("git {args} failed{}: {stderr}", .code.map(|c| format!(" (status {c})")).unwrap_or_default())]
    Git {
        args: String,
        code: Option<i32>,
        stderr: String,
    },

    // The sandbox layer's variants (src/sandbox/).
    #[error("sandbox unavailable: {0}")]
    SandboxUnavailable(String),

    #[error(
        "policy {policy} requires {feature}, which needs Landlock ABI {needs} (Linux {linux} or newer); \
         this kernel has Landlock ABI {abi} (the policy says [compatibility] {key} = \"required\")"
    )]
    FeatureUnavailable {
        policy: String,
        feature: &'static str,
        needs: u32,
        linux: &'static str,
        abi: u32,
        /// The key of the policy's `[compatibility]` table that makes it best effort.
        key: &'static str,
    },

    #[error(
        "policy {policy} requires the seccomp layer (unix sockets, udp, tcp bypasses), which isolate cannot \
         build here: {why} (the policy says [compatibility] seccomp = \"required\")"
    )]
    SeccompUnavailable { policy: String, why: &'static str },

    #[error("sandbox setup failed: {0}")]
    Sandbox(String),

    #[error("policy {source_name}: {message}")]
    Policy {
        source_name: String,
        message: String,
    },

    /// A step of the pre-exec helper's setup (rlimits, capabilities, Landlock, descriptors, the
    /// seccomp filter and its handover, the monitor's fork) or of building the seccomp filter
    /// failed: what the step was, and the system's answer.
    #[error("{step}: {source}")]
    SandboxStep {
        step: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The kernel enforced less of a Landlock ruleset than the plan asked (`status` as
    /// rust-landlock reports it): the job must not start unconfined.
    #[error("the kernel enforced less than asked: {status}")]
    LandlockNotEnforced { status: String },

    /// The helper got no usable seccomp filter from the supervisor (`length` is what it announced:
    /// 0 when the supervisor could not build one).
    #[error("the supervisor could not build the seccomp filter")]
    SeccompFilterMissing { length: usize },

    /// A path as a policy writes it (`written`) cannot be expanded: a variable unset or empty, a
    /// lone `$`, an unclosed `${`.
    #[error("{why}")]
    PathExpansion { written: String, why: String },

    /// A `missing = "create"` path cannot be made: its nearest existing ancestor is not a
    /// directory (`errno` `None`), or isolate may not write it (`errno` says why).
    #[error("{}{}", .ancestor.display(), match .errno {
        Some(errno) => format!(": {}", errno.desc()),
        None => " is not a directory".to_string(),
    })]
    NotCreatable {
        ancestor: PathBuf,
        errno: Option<nix::errno::Errno>,
    },

    /// Making a `missing = "create"` path (or a parent of it) failed at `path`.
    #[error("cannot create {}: {source}", .path.display())]
    CannotCreate {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// An entry of `[network] allow` (or `--allow-net`) that is not a host name, and why.
    #[error("allow entry {entry:?} is not a host name: {why}")]
    NotAHostName { entry: String, why: &'static str },

    // The supervisor's variants (src/supervise/).
    #[error("{0}: command not found")]
    CommandNotFound(String),

    #[error("{cmd}: cannot execute: {reason}")]
    CommandNotExecutable { cmd: String, reason: String },

    // The worktree layer's variants (src/worktree/).
    #[error("{0}")]
    Refused(String),

    /// A job cannot be taken as asked (it is running, it was lost, it has no kept worktree…).
    #[error("job {job} {why}")]
    Job { job: String, why: String },

    /// No job answers to what the user typed.
    #[error("no job matches {0:?} (see isolate ps --all)")]
    NoSuchJob(String),

    /// More than one job answers to what the user typed.
    #[error("{query:?} matches {} jobs: {}", .jobs.len(), .jobs.join(", "))]
    AmbiguousJob { query: String, jobs: Vec<String> },

    /// A job record that does not parse (a tampered or truncated file).
    #[error("{}: not a job record: {why}", .path.display())]
    NotARecord { path: PathBuf, why: String },

    /// A record names a job by an id isolate never makes.
    #[error("the record of {0} has an invalid id")]
    InvalidRecordId(String),

    /// Every id drawn for a new job was taken.
    #[error("could not find a free job id in {0} attempts")]
    NoFreeId(usize),

    /// Merging the project branch into a job's worktree stopped at conflicts (`sync`).
    #[error("merging {into} conflicts in {}; resolve them in {}", .files.join(", "), .worktree.display())]
    Conflict {
        into: String,
        files: Vec<String>,
        worktree: PathBuf,
    },

    /// git in a job's worktree (run sandboxed) failed.
    #[error("{what}: {stderr}")]
    WorktreeGit { what: &'static str, stderr: String },

    /// A run under this policy fails on this machine (`policy show`).
    #[error("a run with policy {policy} fails here: {problem}")]
    PolicyFails { policy: String, problem: String },

    /// Nowhere to keep isolate's state.
    #[error("cannot find a state directory: set ISOLATE_HOME or HOME")]
    NoStateDir,

    /// `ISOLATE_HOME` (or the XDG variable) names a relative path.
    #[error("the state directory must be an absolute path, got {}", .0.display())]
    RelativeStateDir(PathBuf),

    /// A value isolate writes as JSON could not be made so.
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),

    /// A call to the system that isolate needed failed: `what` says what isolate was doing.
    #[error("{what}: {source}")]
    System {
        what: &'static str,
        #[source]
        source: io::Error,
    },

    /// The project's setup command (`.isolate.toml`) did not succeed; the new worktree was removed.
    #[error("the setup command {command:?} {failure}")]
    Setup {
        command: String,
        failure: SetupFailure,
    },

    /// A question isolate asked was not answered yes (or could not be asked).
    #[error("{0}")]
    NotConfirmed(&'static str),

    /// Writing a command's output failed (its reader went away, or the disk is full).
    #[error("cannot write to standard output: {0}")]
    Output(#[source] io::Error),

    #[error("{0}")]
    Other(String),
}

/// How the project's setup command failed.
#[derive(Debug, thiserror::Error)]
pub enum SetupFailure {
    #[error("could not start: {0}")]
    Start(Box<Error>),
    #[error("ran longer than {}; the new worktree was removed", humantime::format_duration(*.0))]
    TimedOut(std::time::Duration),
    #[error("failed with status {0}; the new worktree was removed")]
    Status(i32),
}

/// How much of git's stderr an error keeps: a job's repository can make git print a line for each
/// of a hundred thousand objects, and the error goes into the job's record and onto the terminal.
const GIT_STDERR_MAX: usize = 2000;

impl Error {
    /// git `args` failed with `code`, saying `stderr` (trimmed, and cut after `GIT_STDERR_MAX`
    /// bytes with a note of how much more there was).
    pub fn git(args: impl Into<String>, code: Option<i32>, stderr: &[u8]) -> Self {
        let text = String::from_utf8_lossy(stderr);
        let text = text.trim();
        let stderr = if text.len() <= GIT_STDERR_MAX {
            text.to_string()
        } else {
            let mut cut = GIT_STDERR_MAX;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{} … ({} more bytes)", &text[..cut], text.len() - cut)
        };
        Error::Git {
            args: args.into(),
            code,
            stderr,
        }
    }

    pub fn io(what: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io {
            what,
            path: path.into(),
            source,
        }
    }

    /// The exit status of `isolate run` for this error (spec/cli.md, "Exit status").
    pub fn run_exit_code(&self) -> i32 {
        match self {
            Error::CommandNotFound(_) => 127,
            Error::CommandNotExecutable { .. } => 126,
            _ => 125,
        }
    }

    /// A line of advice printed after the error, when there is something the user can do.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Error::SandboxUnavailable(_) => Some(
                "Hint: isolate needs Landlock ABI 3 or newer (Linux 6.2+, with `landlock` in the `lsm=` boot parameter); \
                 use --no-sandbox to run unsandboxed on purpose",
            ),
            Error::FeatureUnavailable { .. } => Some(
                "Hint: use a newer kernel; or mark the feature best effort in the policy's [compatibility] table \
                 (network = \"best_effort\" or scopes = \"best_effort\"), and it is listed as a gap instead; \
                 or use --no-sandbox to run unsandboxed on purpose",
            ),
            Error::SeccompUnavailable { .. } => Some(
                "Hint: use Linux 5.6 or newer; or mark the layer best effort in the policy's [compatibility] table \
                 (seccomp = \"best_effort\"), and what it covers is listed as a gap instead",
            ),
            Error::NotARepository(_) => Some("Hint: run isolate inside a git repository, or drop --worktree"),
            Error::NoCommit(_) => Some("Hint: make a first commit (git commit --allow-empty -m init)"),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
