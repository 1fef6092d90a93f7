//! The paths a job needs whatever its policy says (its worktree, TMPDIR, project, `--allow-write`,
//! its command's installation), added to a policy's resolved paths, and the refusal of a write rule
//! that would open the home directory, the project or a credential store. Never makes a path
//! writable that the job's caller did not name.

use std::fs;
use std::path::{Path, PathBuf};

use super::resolve::granted;
use super::{Access, Outcome, Resolved};
use crate::error::{Error, Result};
use crate::sandbox::policy::Policy;

/// The paths a job needs whatever its policy says.
pub struct Job<'a> {
    /// Its worktree: writable, but no FIFO may be made there (isolate reads the worktree after the
    /// job, and opening a FIFO waits for a writer).
    pub worktree: Option<&'a Path>,
    /// Its TMPDIR.
    pub writable: &'a [PathBuf],
    /// The project (its top level, git directory, objects and hooks: the worktree borrows them), or
    /// without `--worktree` the current directory.
    pub readable: &'a [PathBuf],
    /// `--allow-write`.
    pub allow_write: &'a [PathBuf],
    /// The command's own installation (sandbox/agent/), readable when the policy says
    /// `installation = true`.
    pub installation: &'a [PathBuf],
}

/// An `--allow-write` path, canonical; one that does not exist is an error saying how to make it.
pub fn allowed_write(path: &Path) -> Result<PathBuf> {
    fs::canonicalize(path).map_err(|e| {
        let shown = path.display();
        Error::Usage(match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "--allow-write {shown}: it does not exist; create it first (mkdir -p {}), or grant \
                 it in a profile of your own as {{ path = \"{shown}\", missing = \"create\" }} under \
                 [filesystem] write",
                crate::controls::shell_quote(path)
            ),
            _ => format!("--allow-write {shown}: {e}"),
        })
    })
}

/// Adds `job`'s own paths to `resolved`; the `--allow-write` paths, canonical, for the report.
pub(super) fn add_job_paths(
    resolved: &mut Vec<Resolved>,
    job: &Job,
    policy: &Policy,
) -> Result<Vec<String>> {
    let mut allow_write = Vec::new();
    for path in job.allow_write {
        let canonical = allowed_write(path)?;
        allow_write.push(canonical.display().to_string());
        resolved.push(granted(
            job_path(&path.display().to_string(), Access::Write),
            canonical,
        ));
    }
    let writable = job.writable.iter().map(|p| (p.as_path(), Access::Write));
    for (path, access) in job
        .worktree
        .map(|w| (w, Access::Worktree))
        .into_iter()
        .chain(writable)
    {
        let canonical = fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
        resolved.push(granted(
            job_path(&path.display().to_string(), access),
            canonical,
        ));
    }
    // isolate's state directory is never the job's to read, whatever the policy's read rules: its
    // lock files take a lock on a descriptor opened for reading (a job holding `ports/.take` hung
    // every later `isolate run` of the user), and it holds every job's records, logs and
    // worktrees. What of it the job needs (its TMPDIR, its nested state, its worktree) is granted
    // above, each by its own rule.
    if let Ok(state) = crate::job::store::state_dir()
        .and_then(|s| fs::canonicalize(&s).map_err(|e| Error::io("cannot resolve", &s, e)))
    {
        resolved.push(granted(job_path("<isolate state>", Access::Deny), state));
    }
    // What the job must read whatever the policy says; a path that does not exist needs no rule.
    let installation = job
        .installation
        .iter()
        .filter(|_| policy.filesystem.installation);
    for path in job.readable.iter().chain(installation) {
        if let Ok(canonical) = fs::canonicalize(path) {
            resolved.push(granted(
                job_path(&path.display().to_string(), Access::Read),
                canonical,
            ));
        }
    }
    Ok(allow_write)
}

/// Fails every write rule of `resolved` that opens the home directory (or above it), or the
/// project or its git directory.
pub(super) fn refuse_opening_home(resolved: &mut [Resolved], job: &Job) {
    // A policy's write rule (a variable in it set by a project's environment, `CODEX_HOME=.git`)
    // never opens the whole home directory or above, nor the project or its git directory.
    let home = std::env::var_os("HOME").map(|h| fs::canonicalize(&h).unwrap_or_else(|_| h.into()));
    for r in resolved
        .iter_mut()
        .filter(|r| matches!(r.access, Access::Write | Access::WriteFile))
    {
        let Some(path) = r.path.clone() else { continue };
        let opens_home = home.as_ref().is_some_and(|h| h.starts_with(&path));
        let opens_project = job.worktree.is_some()
            && job.readable.iter().any(|p| {
                let p = fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                p.starts_with(&path) || (p.ends_with(".git") && path.starts_with(&p))
            });
        if r.written.starts_with('<') || !(opens_home || opens_project) {
            continue;
        }
        r.outcome = Outcome::Failed;
        r.detail = Some(format!(
            "{} is {}; no policy makes that writable",
            path.display(),
            if opens_home {
                "the home directory or a directory above it"
            } else {
                "the project, its git directory or a directory holding them"
            }
        ));
    }
}

fn job_path(written: &str, access: Access) -> Resolved {
    Resolved {
        written: written.to_string(),
        access,
        path: None,
        outcome: Outcome::Failed,
        detail: None,
        noted: false,
    }
}

/// Fails every write rule of `resolved` that holds a credential store there is: write rules are
/// not carved as read rules are (`carve`), so one over `~/.config` would open `~/.config/gh` to
/// read and write. A rule naming a store itself, or a path inside one, is the policy's choice, as
/// for read rules: so each agent's profile writes its own state (`~/.claude`, `~/.codex`, …),
/// which every other profile is denied.
pub(super) fn refuse_opening_stores(resolved: &mut [Resolved]) {
    let stores: Vec<PathBuf> = resolved
        .iter()
        .filter(|r| r.access == Access::Deny && r.outcome == Outcome::Granted)
        .filter_map(|r| r.path.clone())
        .collect();
    for r in resolved
        .iter_mut()
        .filter(|r| r.access == Access::Write && r.outcome == Outcome::Granted)
    {
        let Some(path) = &r.path else { continue };
        // Only a store that is there (asked of the few beneath a write rule, not of every store).
        let Some(store) = stores
            .iter()
            .filter(|s| s.starts_with(path) && *s != path)
            .find(|s| s.symlink_metadata().is_ok())
        else {
            continue;
        };
        r.detail = Some(format!(
            "{} holds the credential store {}, which a job may never read; name the directories \
             beside it that the job needs",
            path.display(),
            store.display()
        ));
        r.outcome = Outcome::Failed;
    }
}
