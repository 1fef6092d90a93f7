//! Configuration: the user's `$XDG_CONFIG_HOME/isolate/config.toml` and the project's
//! `.isolate.toml`, read from the project's main checkout (never from a job's worktree, which the
//! job can write). Same keys in both; for each key the project wins. Unknown keys are an error.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::git::project::Project;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// A shell command run in every new worktree before CMD (sandboxed like the job).
    pub setup: Option<String>,
    /// Where worktrees go instead of `<state>/worktrees` (relative to the project in `.isolate.toml`).
    pub worktree_root: Option<String>,
    /// The default policy for `isolate run` in this project.
    pub policy: Option<String>,
    /// `.worktreeinclude` patterns, used when the project has no `.worktreeinclude`.
    pub include: Option<Vec<String>>,
}

/// A configuration and where each of its files was.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub config: Config,
    /// The file `worktree_root` came from (a relative root is relative to its directory's project).
    pub root_from_project: bool,
}

/// The user's config file.
pub fn user_file() -> Option<PathBuf> {
    Some(crate::sys::dirs::config_home()?.join("isolate/config.toml"))
}

/// The user's config, then the project's on top (when there is a project).
pub fn load(project: Option<&Project>) -> Result<Loaded> {
    let user = match user_file() {
        Some(path) => read(&path)?,
        None => None,
    };
    let theirs = match project {
        Some(p) => read(&p.top.join(".isolate.toml"))?,
        None => None,
    };
    let user = user.unwrap_or_default();
    let root_from_project = theirs.as_ref().is_some_and(|c| c.worktree_root.is_some());
    let config = match theirs {
        None => user,
        Some(p) => Config {
            setup: p.setup.or(user.setup),
            worktree_root: p.worktree_root.or(user.worktree_root),
            policy: p.policy.or(user.policy),
            include: p.include.or(user.include),
        },
    };
    Ok(Loaded {
        config,
        root_from_project,
    })
}

fn read(path: &Path) -> Result<Option<Config>> {
    let text = match crate::textfile::read(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("cannot read the configuration", path, e)),
    };
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| Error::Usage(format!("{}: {}", path.display(), e.to_string().trim_end())))
}

impl Loaded {
    /// The directory that holds every project's worktree directories (`<root>/<project key>/<id>`).
    pub fn worktree_root(&self, state: &Path, project: &Project) -> Result<PathBuf> {
        let Some(raw) = &self.config.worktree_root else {
            return Ok(state.join("worktrees"));
        };
        let expanded = match raw.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(rest))
                .ok_or_else(|| Error::Usage("worktree_root uses ~ but HOME is not set".into()))?,
            None => PathBuf::from(raw),
        };
        if expanded.is_absolute() {
            return Ok(expanded);
        }
        if self.root_from_project {
            return Ok(project.top.join(expanded));
        }
        Err(Error::Usage(format!(
            "worktree_root {raw:?} in the user configuration must be an absolute path"
        )))
    }
}

/// When the worktree root lies inside the project, its worktrees must not show up in the project's
/// `git status` or be deleted by `git clean -ffdx`: the root is added once to the project's
/// `info/exclude` (tracked files are never changed).
pub fn exclude_root_in_project(project: &Project, root: &Path) -> Result<()> {
    let (Ok(top), Ok(root)) = (fs::canonicalize(&project.top), fs::canonicalize(root)) else {
        return Ok(());
    };
    let Ok(relative) = root.strip_prefix(&top) else {
        return Ok(());
    };
    if relative.as_os_str().is_empty() {
        return Err(Error::Usage(
            "worktree_root may not be the project's top level itself".into(),
        ));
    }
    let pattern = format!("/{}/", relative.display());
    let exclude = project.git_dir.join("info/exclude");
    let current = fs::read_to_string(&exclude).unwrap_or_default();
    if current.lines().any(|l| l.trim() == pattern) {
        return Ok(());
    }
    if let Some(dir) = exclude.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# isolate's worktrees (worktree_root)\n");
    text.push_str(&pattern);
    text.push('\n');
    crate::job::store::write_atomic(&exclude, text.as_bytes())
}
