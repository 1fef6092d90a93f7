//! The hygiene every project-side git gets (docs/worktrees.md): the `-c` options that turn hooks and
//! fsmonitor off, the environment that turns prompts, optional locks and askpass helpers off, and
//! the variables that would point git at another repository, removed. Written once here: whatever
//! else starts a project-side git (the import's sandboxed reader) takes them from here, never
//! re-types them.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

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

/// The `-c` option that turns hooks off: part of `CONFIG`, and all of it that the sandboxed git in
/// a job's worktree takes (`merge` there: its fsmonitor runs confined like the job).
pub const NO_HOOKS: [&str; 2] = ["-c", "core.hooksPath=/dev/null"];

/// The `-c` options of every project-side git: the project's hooks and fsmonitor never run.
pub const CONFIG: [&str; 4] = [NO_HOOKS[0], NO_HOOKS[1], "-c", "core.fsmonitor=false"];

/// The environment of every project-side git: no prompt, no optional lock, no askpass helper, and
/// git's messages in English (they are matched). ssh asks its questions (a password, an unknown
/// host key) on `/dev/tty` unless told to use its askpass program, which answers nothing: a fetch
/// over ssh (`--pr`, `--base fresh`) fails at once instead of waiting for the time limit.
pub const ENV: [(&str, &str); 6] = [
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_ASKPASS", "true"),
    ("SSH_ASKPASS", "true"),
    ("SSH_ASKPASS_REQUIRE", "force"),
    ("LC_ALL", "C"),
];

/// Whether the variable `name` would point git elsewhere (`LOCATION_VARS`, `REDIRECTING_VARS`).
pub fn redirects(name: &OsStr) -> bool {
    LOCATION_VARS
        .iter()
        .chain(REDIRECTING_VARS)
        .any(|r| name == *r)
}

/// `git -C dir` with the hygiene flags, ready for arguments.
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(CONFIG)
        .arg("--no-pager")
        .envs(ENV)
        .stdin(Stdio::null());
    for var in LOCATION_VARS.iter().chain(REDIRECTING_VARS) {
        cmd.env_remove(var);
    }
    cmd
}
