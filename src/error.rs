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

    // The supervisor's variants (src/supervise/).
    #[error("{0}: command not found")]
    CommandNotFound(String),

    #[error("{cmd}: cannot execute: {reason}")]
    CommandNotExecutable { cmd: String, reason: String },

    /// A call into the kernel failed (a pipe, a socket pair, a fork, signal handlers, a temporary
    /// directory): what it was for, and the kernel's reason.
    #[error("{0}: {1}")]
    System(&'static str, #[source] io::Error),

    /// No block of `block` free TCP ports is left in `low`-`high`, the range `var` sets.
    #[error("no free block of {block} TCP ports in {low}-{high} (set {var})")]
    NoFreePorts {
        block: u16,
        low: u16,
        high: u16,
        var: &'static str,
    },

    /// The network proxy of a domain allowlist cannot listen on 127.0.0.1:`port`.
    #[error("cannot start the network proxy on 127.0.0.1:{port}: {source}")]
    ProxyStart {
        port: u16,
        #[source]
        source: io::Error,
    },

    /// The sandbox plan cannot be encoded for the pre-exec helper.
    #[error("{0}")]
    PlanEncoding(#[source] serde_json::Error),

    // The worktree layer's variants (src/worktree/).
    #[error("{0}")]
    Refused(String),

    #[error("{0}")]
    Other(String),
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
