//! Which agent a command is, told by its real executable: the command is looked up on `PATH` as
//! exec would, every symlink resolved, and the file it comes to is matched against where each
//! agent's installers put it (npm's package directory, the native installer's versions directory,
//! a Python entry point that imports the agent). A name alone never matches: a script called
//! `claude` in the project, or `sh -c 'claude …'`, gets no agent's profile, so a caller cannot fake
//! its way into a wider one. Also the tree a command's installation occupies (`installation`), which
//! a profile may make readable (`strict` does: agents installed per user then run); and the
//! agent's own trust of the project carried to the job's worktree (trust.rs).

mod executable;
mod installation;
#[cfg(test)]
mod tests;
pub mod trust;

use std::path::{Path, PathBuf};

pub use executable::{head, resolve};
pub use installation::installation;

/// An agent isolate knows, and the profile it runs under when no `--policy` is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    pub name: &'static str,
    pub profile: &'static str,
    /// Parts of the real executable's path that only its installers make.
    markers: &'static [&'static str],
    /// A Python entry point's own name and the module it imports (pip, pipx, uv).
    python: Option<(&'static str, &'static str)>,
}

/// The agents, with where their installers put them.
pub const KNOWN: [Known; 5] = [
    Known {
        name: "Claude Code",
        profile: "claude-code",
        markers: &[
            "/node_modules/@anthropic-ai/claude-code/",
            "/.local/share/claude/versions/",
            "/.claude/local/",
        ],
        python: None,
    },
    Known {
        name: "Codex",
        profile: "codex",
        markers: &[
            "/node_modules/@openai/codex/",
            "/.codex/packages/",
            "/Cellar/codex/",
        ],
        python: None,
    },
    Known {
        name: "aider",
        profile: "aider",
        markers: &["/pipx/venvs/aider-chat/", "/uv/tools/aider-chat/"],
        python: Some(("aider", "aider.main")),
    },
    Known {
        name: "opencode",
        profile: "opencode",
        markers: &["/node_modules/opencode-ai/", "/.opencode/bin/"],
        python: None,
    },
    Known {
        name: "Gemini CLI",
        profile: "gemini",
        markers: &["/node_modules/@google/gemini-cli/"],
        python: None,
    },
];

/// A command found to be a known agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    pub agent: Known,
    /// The file the command resolves to, every symlink followed.
    pub executable: PathBuf,
}

/// The agent `command` (CMD's first word) is, run from `cwd` with `path` as `PATH`.
pub fn detect(command: &str, cwd: &Path, path: Option<&str>) -> Option<Detected> {
    detect_at(resolve(command, cwd, path)?)
}

/// The agent `executable` (a canonical path, as `resolve` gives it) is, if any.
pub fn detect_at(executable: PathBuf) -> Option<Detected> {
    let shown = executable.to_string_lossy();
    let agent = KNOWN.iter().find(|agent| {
        agent.markers.iter().any(|m| shown.contains(m))
            || agent
                .python
                .is_some_and(|(name, module)| python_entry_point(&executable, name, module))
    })?;
    Some(Detected {
        agent: *agent,
        executable,
    })
}

/// Whether `executable` is a Python entry point named `name` that imports `module` (what pip, pipx
/// and uv write: a short script whose first line names a Python).
fn python_entry_point(executable: &Path, name: &str, module: &str) -> bool {
    if executable.file_name().and_then(|n| n.to_str()) != Some(name) {
        return false;
    }
    // A regular file only, opened without waiting (a FIFO named `aider` must not hang isolate).
    let Some(head) = head(executable) else {
        return false;
    };
    let text = String::from_utf8_lossy(&head);
    text.starts_with("#!")
        && text.lines().next().is_some_and(|l| l.contains("python"))
        && text.contains(module)
}
