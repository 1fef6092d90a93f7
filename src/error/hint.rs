//! What an error means for the user: the exit status of `run` (docs/cli.md, "Exit status") and
//! the line of advice printed after it.

use super::Error;

impl Error {
    /// The exit status of `isolate run` for this error (docs/cli.md, "Exit status").
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
                "Hint: use Linux 5.6 or newer (in a container sandbox such as gVisor, which lacks it, a runc runtime \
                 class); or mark the layer best effort in the policy's [compatibility] table \
                 (seccomp = \"best_effort\"), and what it covers is listed as a gap instead",
            ),
            Error::NotARepository(_) => Some("Hint: run isolate inside a git repository, or drop --worktree"),
            Error::NoCommit(_) => Some("Hint: make a first commit (git commit --allow-empty -m init)"),
            _ => None,
        }
    }
}
