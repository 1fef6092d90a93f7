//! The plan: a policy resolved for one job on this kernel. Every path is expanded (`~`, `$VAR`),
//! made absolute and canonical before it becomes a rule, so a symlink swapped in later cannot move a
//! rule. Each Landlock feature the policy asks for is checked against the kernel's ABI: a required
//! one the kernel lacks fails the run (fail closed), a best-effort one becomes a gap. The `Rules` are
//! what the pre-exec helper enforces; the gaps are what the report, `doctor` and `policy show` say
//! about them. `preview` is the same resolution without a job, for `policy show` and `doctor`.
//! This file holds the `Plan` the helper gets and `build`, which makes the rules for one job; the
//! stages of the resolution are in the files beside it.

mod carve;
mod create;
mod devices;
mod expand;
mod features;
mod gaps;
mod preview;
mod resolve;
mod resolved;
mod rules;
mod sockets;
#[cfg(test)]
mod tests;

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::job::record::SandboxReport;
use crate::sandbox::made::Made;
use crate::sandbox::policy::Loaded;
use crate::sandbox::probe;

pub use devices::{DEVICES, DEVICE_READS};
pub(crate) use expand::expand;
pub use features::{check_kernel, features, Feature, FeatureState, Kernel};
pub use gaps::NO_SANDBOX;
pub use preview::{preview, Preview};
pub use resolved::{Access, Outcome, Resolved};
pub use rules::{Limit, Resource, Rules};
pub use sockets::{Route, Sockets};

use create::create;
use gaps::gaps;
use resolve::{granted, resolve_policy_paths};
use resolved::reads_everything;
use rules::rules;

/// What the pre-exec helper does before it execs CMD.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// `None` with `--no-sandbox`.
    pub rules: Option<Rules>,
    /// Descriptor on which the helper reports why CMD could not be executed.
    pub status_fd: i32,
    /// Descriptor the helper reads one byte from before it execs CMD (the supervisor's release).
    pub go_fd: i32,
    /// Interactive mode: CMD gets its own process group on its terminal, under a monitor.
    #[serde(default)]
    pub job_control: bool,
}

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
    /// The command's own installation (sandbox/agent.rs), readable when the policy says
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

/// What `build` makes of a policy for one job.
#[derive(Debug)]
pub struct Built {
    /// `None` with `--no-sandbox`.
    pub rules: Option<Rules>,
    /// What the job's record says about them.
    pub report: SandboxReport,
    /// For the start line.
    pub notes: Vec<String>,
    /// The paths created for it (`missing = "create"`), for a run that fails to undo.
    pub made: Made,
}

/// Builds the rules for `job` under `loaded`, on this kernel (see `check_kernel`). Every path is
/// resolved and checked before any `missing = "create"` path is made; a failure while making them
/// undoes what was made.
pub fn build(loaded: &Loaded, job: &Job, no_sandbox: bool) -> Result<Built> {
    let policy = &loaded.policy;
    if no_sandbox {
        let report = SandboxReport {
            enforced: false,
            landlock_abi: probe::landlock_abi(),
            policy: loaded.name.clone(),
            policy_ref: Some(loaded.reference.clone()),
            gaps: vec![NO_SANDBOX.to_string()],
            allow_write: Vec::new(),
            refused: None,
        };
        return Ok(Built {
            rules: None,
            report,
            notes: Vec::new(),
            made: Made::default(),
        });
    }
    let abi = check_kernel(loaded)?;
    let fail = |message: String| Error::Policy {
        source_name: loaded.name.clone(),
        message,
    };

    let mut resolved = resolve_policy_paths(policy);
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
    // Every path is checked before anything is made.
    if let Some(r) = resolved.iter().find(|r| r.outcome == Outcome::Failed) {
        let what = match r.access {
            Access::Read | Access::List => "read path",
            Access::Write | Access::Worktree => "write path",
            Access::WriteFile => "writable file",
            Access::Device => "device",
            Access::Connect => "unix socket",
            Access::Deny => "denied path",
        };
        let detail = r.detail.clone().unwrap_or_default();
        return Err(fail(format!("{what} {}: {detail}", r.written)));
    }
    let mut made = Made::default();
    let mut created = Vec::with_capacity(resolved.len());
    for r in resolved {
        if r.outcome != Outcome::WillCreate {
            created.push(r);
            continue;
        }
        let written = r.written.clone();
        match create(r, &mut made) {
            Ok(r) => created.push(r),
            Err(e) => {
                made.undo();
                return Err(fail(format!("write path {written}: {e}")));
            }
        }
    }
    let resolved = created;
    let mut notes = Vec::new();
    for r in &resolved {
        let detail = r.detail.clone().unwrap_or_default();
        match r.outcome {
            Outcome::Skipped if r.noted => notes.push(format!("{} skipped: {detail}", r.written)),
            Outcome::Created => notes.push(detail),
            _ => {}
        }
    }
    let kernel = Kernel::probe();
    let states = features(policy, kernel);
    let rules = rules(policy, abi, &resolved, &states);
    let report = SandboxReport {
        enforced: true,
        landlock_abi: Some(abi),
        policy: loaded.name.clone(),
        policy_ref: Some(loaded.reference.clone()),
        gaps: gaps(policy, kernel, &states, reads_everything(&resolved)),
        allow_write,
        refused: None,
    };
    Ok(Built {
        rules: Some(rules),
        report,
        notes,
        made,
    })
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
