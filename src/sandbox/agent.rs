//! Which agent a command is, told by its real executable: the command is looked up on `PATH` as
//! exec would, every symlink resolved, and the file it comes to is matched against where each
//! agent's installers put it (npm's package directory, the native installer's versions directory,
//! a Python entry point that imports the agent). A name alone never matches: a script called
//! `claude` in the project, or `sh -c 'claude …'`, gets no agent's profile, so a caller cannot fake
//! its way into a wider one. Also the tree a command's installation occupies (`installation`), which
//! a profile may make readable (`strict` does: agents installed per user then run).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

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
    let executable = resolve(command, cwd, path)?;
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

/// `command` as exec would find it (a path when it has a slash, else the first executable file of
/// that name on `path`), with every symlink resolved.
pub fn resolve(command: &str, cwd: &Path, path: Option<&str>) -> Option<PathBuf> {
    let found = if command.contains('/') {
        Some(cwd.join(command))
    } else {
        // An empty entry is the current directory, as execvp has it.
        path.unwrap_or("/usr/local/bin:/usr/bin:/bin")
            .split(':')
            .map(|dir| if dir.is_empty() { "." } else { dir })
            .map(|dir| cwd.join(dir).join(command))
            .find(|candidate| is_executable(candidate))
    }?;
    std::fs::canonicalize(found).ok()
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
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

/// The first 4 KiB of `file`, a regular file: opened non-blocking, so that a FIFO never hangs.
pub fn head(file: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(file)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = Vec::new();
    file.take(4096).read_to_end(&mut head).ok()?;
    Some(head)
}

/// Directories a toolchain or installer keeps all of its installation in, wherever they are (and
/// no credentials: `~/.cargo`, which holds `credentials.toml`, is not one).
const ROOTS: [&str; 8] = [
    ".pyenv",
    ".nvm",
    ".bun",
    ".volta",
    ".asdf",
    ".deno",
    ".opencode",
    ".rustup",
];

/// The directory tree `executable`'s installation occupies, for a profile to make readable: npm's
/// prefix (its `node` and `lib/node_modules`, as nvm and a per-user prefix lay them out), a
/// toolchain's own root (`~/.pyenv`, `~/.nvm`, `~/.bun`, ...), an installer's directory under
/// `.local/share`, a Python virtual environment with the Python it was made from, else the
/// executable alone. Never `home` or a directory above it (an npm prefix of `~` would otherwise
/// open the whole home directory): the executable alone then.
pub fn installation(executable: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let home = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
    // Canonical before judged: `home = ../x` in a pyvenv.cfg must not pass as something narrower.
    let trees: Vec<PathBuf> = layout(executable, home.as_deref())
        .into_iter()
        .map(|t| std::fs::canonicalize(&t).unwrap_or(t))
        .collect();
    let too_wide = |tree: &PathBuf| {
        tree.parent().is_none()
            || home.as_ref().is_some_and(|home| {
                home.starts_with(tree) || WIDE.iter().any(|wide| home.join(wide) == *tree)
            })
    };
    if trees.is_empty() || trees.iter().any(too_wide) {
        return vec![executable.to_path_buf()];
    }
    trees
}

/// Directories of the home directory that hold far more than any one installation (keyrings,
/// histories, every tool's state): never a whole installation tree.
const WIDE: [&str; 5] = [
    ".local",
    ".local/share",
    ".config",
    ".cache",
    ".local/state",
];

fn layout(executable: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let shown = executable.to_string_lossy();
    if let Some(at) = shown.find("/lib/node_modules/") {
        let prefix = PathBuf::from(&shown[..at]);
        // A prefix in the home directory (`~/.local`, `~/.npm-global`) holds more than npm's:
        // its package and its bin directory only.
        if home.is_some_and(|home| prefix.starts_with(home)) {
            let rest = &shown[at + "/lib/node_modules/".len()..];
            let mut parts = rest.split('/');
            let package = match parts.next() {
                Some(scope) if scope.starts_with('@') => {
                    format!("{scope}/{}", parts.next().unwrap_or_default())
                }
                Some(name) => name.to_string(),
                None => return Vec::new(),
            };
            return vec![
                prefix.join("lib/node_modules").join(package),
                prefix.join("bin"),
            ];
        }
        return vec![prefix];
    }
    let mut prefix = PathBuf::new();
    let mut components = executable.components().peekable();
    while let Some(part) = components.next() {
        prefix.push(part);
        let name = part.as_os_str().to_string_lossy();
        if ROOTS.contains(&name.as_ref()) {
            return vec![prefix];
        }
        if name == "share" && prefix.parent().is_some_and(|p| p.ends_with(".local")) {
            if let Some(tool) = components.next() {
                prefix.push(tool);
                return venv_or(prefix, executable);
            }
        }
    }
    venv_or(executable.to_path_buf(), executable)
}

/// `fallback`, or the virtual environment `executable` lives in (the directory with `pyvenv.cfg`)
/// and the installation of the Python it was made from (`home = …/bin` there).
fn venv_or(fallback: PathBuf, executable: &Path) -> Vec<PathBuf> {
    for dir in executable.ancestors().skip(1).take(4) {
        let cfg = dir.join("pyvenv.cfg");
        let Ok(text) = crate::textfile::read_untrusted(&cfg, 64 << 10) else {
            continue;
        };
        let mut out = vec![dir.to_path_buf()];
        if let Some(bin) = text.lines().find_map(|l| {
            l.strip_prefix("home")
                .map(|r| r.trim_start_matches([' ', '=']))
        }) {
            // Only an absolute `home`: a relative one is whatever the file's writer wants.
            let bin = Path::new(bin.trim());
            if let Some(prefix) = bin.parent().filter(|_| bin.is_absolute()) {
                out.push(prefix.to_path_buf());
            }
        }
        return out;
    }
    vec![fallback]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn executable(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn agents_are_told_by_their_real_executable_never_by_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let package = root.join("prefix/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe");
        executable(&package, "\x7fELF");
        let bin = root.join("prefix/bin");
        fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(&package, bin.join("claude")).unwrap();
        // A script of the same name elsewhere is not the agent.
        executable(&root.join("fake/claude"), "#!/bin/sh\nrm -rf ~\n");
        let path = format!("{}", bin.display());
        let found = detect("claude", root, Some(&path)).unwrap();
        assert_eq!(found.agent.profile, "claude-code");
        assert_eq!(found.executable, fs::canonicalize(&package).unwrap());
        let fake = format!("{}", root.join("fake").display());
        assert_eq!(detect("claude", root, Some(&fake)), None);
        assert_eq!(detect("./fake/claude", root, None), None);
        // aider: a pip entry point that imports aider.
        executable(
            &root.join("venv/bin/aider"),
            "#!/venv/bin/python3\nimport sys\nfrom aider.main import main\nsys.exit(main())\n",
        );
        let venv = format!("{}", root.join("venv/bin").display());
        assert_eq!(
            detect("aider", root, Some(&venv)).unwrap().agent.profile,
            "aider"
        );
        executable(&root.join("other/aider"), "#!/bin/sh\necho aider.main\n");
        let other = format!("{}", root.join("other").display());
        assert_eq!(detect("aider", root, Some(&other)), None);
        assert_eq!(detect("sh", root, Some("/bin:/usr/bin")), None);
    }

    #[test]
    fn an_installation_is_the_tree_its_installer_made() {
        let cases = [
            (
                "/opt/node/lib/node_modules/@openai/codex/bin/codex.js",
                "/opt/node",
            ),
            ("/home/u/.nvm/versions/node/v20/bin/node", "/home/u/.nvm"),
            (
                "/home/u/.local/share/claude/versions/2.1.3",
                "/home/u/.local/share/claude",
            ),
            ("/home/u/.bun/bin/gemini", "/home/u/.bun"),
            ("/root/.pyenv/shims/python3", "/root/.pyenv"),
            ("/home/u/tools/agent", "/home/u/tools/agent"),
            // Never the home directory, or above it.
            ("/home/u/.cargo/bin/cargo", "/home/u/.cargo/bin/cargo"),
            ("/lib/node_modules/x/cli.js", "/lib/node_modules/x/cli.js"),
        ];
        let home = Some(Path::new("/home/u"));
        // npm with a prefix of the home directory itself: the package and ~/bin, not home.
        assert_eq!(
            installation(Path::new("/home/u/lib/node_modules/x/cli.js"), home),
            vec![
                PathBuf::from("/home/u/lib/node_modules/x"),
                PathBuf::from("/home/u/bin")
            ]
        );
        // npm with a prefix in the home directory: the package and the bin directory only.
        assert_eq!(
            installation(
                Path::new("/home/u/.local/lib/node_modules/@anthropic-ai/claude-code/cli.js"),
                home
            ),
            vec![
                PathBuf::from("/home/u/.local/lib/node_modules/@anthropic-ai/claude-code"),
                PathBuf::from("/home/u/.local/bin")
            ]
        );
        for (exe, tree) in cases {
            assert_eq!(
                installation(Path::new(exe), home),
                vec![PathBuf::from(tree)],
                "{exe}"
            );
        }
    }
}
