//! What CMD is: its real executable as exec will find it, the agent it is (never one installed in
//! the project or the current directory: that is the project's code), and the name its job is
//! slugged from.

use std::fs;
use std::path::{Path, PathBuf};

use crate::sandbox::agent;

/// The job is named after its command when `--name` is absent.
pub(super) fn slug_source(command: &[String]) -> &[u8] {
    command
        .first()
        .map(|c| {
            Path::new(c)
                .file_name()
                .map_or(c.as_bytes(), |n| n.as_encoded_bytes())
        })
        .unwrap_or(b"task")
}

/// CMD's real executable, as exec will find it from `cwd` on the caller's `PATH`.
pub(super) fn executable(command: &[String], cwd: &Path) -> Option<PathBuf> {
    agent::resolve(command.first()?, cwd, std::env::var("PATH").ok().as_deref())
}

/// The agent at `executable` (CMD, as `executable` found it), if any; never an executable inside
/// `untrusted` (the project, the current directory): a project's own
/// `node_modules/@anthropic-ai/claude-code` is the project's code, and gets no agent's profile.
pub(super) fn detect(executable: Option<&Path>, untrusted: &[&Path]) -> Option<agent::Detected> {
    let found = agent::detect_at(executable?.to_path_buf())?;
    (!untrusted.iter().any(|dir| inside(&found, dir))).then_some(found)
}

pub(super) fn inside(found: &agent::Detected, dir: &Path) -> bool {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    found.executable.starts_with(dir)
}
