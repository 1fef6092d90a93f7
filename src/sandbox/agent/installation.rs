//! The tree a command's installation occupies, for a profile to make readable. Never the home
//! directory, a directory above it, or one of its catch-all directories (`.config`, `.local`).

use std::path::{Path, PathBuf};

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
