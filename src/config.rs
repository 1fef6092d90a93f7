//! Configuration: the user's `$XDG_CONFIG_HOME/isolate/config.toml` and the project's
//! `.isolate.toml`, read from the project's main checkout (never from a job's worktree, which the
//! job can write). Same keys in both; for each key the project wins. Unknown keys are an error.

use std::fs;
use std::path::{Component, Path, PathBuf};

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
    /// What a worktree is cut from without `--base`: the caller's HEAD (`head`, the default) or
    /// the remote's default branch, fetched first (`fresh`).
    pub base: Option<BaseSetting>,
    /// Where `fresh` falls back when the remote cannot be reached: nowhere (the run fails, the
    /// default), or the caller's HEAD (`head`).
    pub base_fallback: Option<BaseSetting>,
    /// Which sandbox tier jobs run in: `auto` (namespaces where the kernel allows them, the
    /// default), `namespaces` (or the run fails) or `landlock` (Landlock and seccomp alone).
    /// `ISOLATE_TIER` overrides it.
    pub tier: Option<TierSetting>,
    /// Limits of every job's cgroup unless the policy or the command line says otherwise: memory
    /// (a size: `"4G"`), CPUs (`1.5`), processes.
    pub memory: Option<String>,
    pub cpus: Option<f64>,
    pub pids: Option<u64>,
    /// The remote every job's branch is pushed to once home (`--push`).
    pub push: Option<String>,
    /// How many background jobs may run at once (per user); the rest wait, `queued`.
    pub max_running: Option<usize>,
}

/// What the setting (`ISOLATE_TIER`, else the configuration's `tier`) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TierSetting {
    /// Namespaces where the kernel allows them, else Landlock alone (the default).
    Auto,
    /// Namespaces, or the run fails.
    Namespaces,
    /// Landlock alone, even where namespaces could be made.
    Landlock,
}

impl TierSetting {
    /// `ISOLATE_TIER` if set, else `configured`, else `Auto`. A value it does not know is an error
    /// naming it.
    pub fn from_env(configured: Option<TierSetting>) -> Result<TierSetting, String> {
        match std::env::var("ISOLATE_TIER") {
            Err(_) => Ok(configured.unwrap_or(TierSetting::Auto)),
            Ok(v) => match v.trim() {
                "" | "auto" => Ok(TierSetting::Auto),
                "namespaces" => Ok(TierSetting::Namespaces),
                "landlock" => Ok(TierSetting::Landlock),
                other => Err(format!(
                    "ISOLATE_TIER={other:?}: expected auto, namespaces or landlock"
                )),
            },
        }
    }
}

/// `base` and `base_fallback`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BaseSetting {
    Head,
    Fresh,
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
            base: p.base.or(user.base),
            base_fallback: p.base_fallback.or(user.base_fallback),
            tier: p.tier.or(user.tier),
            memory: p.memory.or(user.memory),
            cpus: p.cpus.or(user.cpus),
            pids: p.pids.or(user.pids),
            max_running: user.max_running,
            push: p.push.or(user.push),
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
        let root = if expanded.is_absolute() {
            expanded
        } else if self.root_from_project {
            project.top.join(expanded)
        } else {
            return Err(Error::Usage(format!(
                "worktree_root {raw:?} in the user configuration must be an absolute path"
            )));
        };
        check_root(raw, &root, state, project)?;
        Ok(root)
    }
}

/// A worktree root may not lie in a git directory (the project's, or any other: a job's files
/// there would be refs, objects or hooks of that repository) nor in isolate's state directory
/// outside its `worktrees` (a job's files there would be records). Judged on the path as it
/// resolves now, links followed, for the part that exists.
fn check_root(raw: &str, root: &Path, state: &Path, project: &Project) -> Result<()> {
    let real = resolved(root);
    let refuse = |what: &str| {
        Err(Error::Usage(format!(
            "worktree_root {raw:?} resolves to {}, {what}; a job's worktree may not go there",
            real.display()
        )))
    };
    for dir in [&project.git_dir, &project.objects, &project.hooks] {
        if real.starts_with(resolved(dir)) {
            return refuse("inside the project's git directory");
        }
    }
    if let Some(git_dir) = real.ancestors().find(|dir| is_git_dir(dir)) {
        return refuse(&format!("inside the git directory {}", git_dir.display()));
    }
    // That job could write every worktree made there. Every repository above is looked at, not
    // only the nearest: a job can make one of its own inside its worktree.
    if let Some(top) = real
        .ancestors()
        .find_map(|dir| crate::git::mark::marked_top(dir).filter(|top| top == dir))
    {
        return refuse(&format!("inside the job worktree {}", top.display()));
    }
    let state = resolved(state);
    // Where isolate puts jobs' worktrees (`worktrees/<project key>/<id>`): inside one whatever
    // its config says, since the job writes that config.
    if let Ok(below) = real.strip_prefix(state.join("worktrees")) {
        if below.components().count() >= 2 {
            return refuse("inside a job's worktree in isolate's state directory");
        }
    }
    if real.starts_with(&state) && !real.starts_with(state.join("worktrees")) {
        return refuse("inside isolate's state directory");
    }
    Ok(())
}

/// `path` with its existing part made canonical (links resolved) and the rest appended, `.` and
/// `..` taken as they will be when the directories are made (`new/../.git` is `.git`).
fn resolved(path: &Path) -> PathBuf {
    let parts: Vec<Component> = path.components().collect();
    for split in (1..=parts.len()).rev() {
        let head: PathBuf = parts[..split].iter().collect();
        let Ok(mut real) = fs::canonicalize(&head) else {
            continue;
        };
        for part in &parts[split..] {
            match part {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return real;
    }
    path.to_path_buf()
}

/// A directory named `.git`, or one holding what makes a git directory (HEAD, objects, refs).
fn is_git_dir(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == ".git")
        || (dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir())
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
    crate::sys::atomic::write(&exclude, text.as_bytes())
}
