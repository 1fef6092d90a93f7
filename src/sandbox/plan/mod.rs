//! The plan: a policy resolved for one job on this kernel. Every path is expanded (`~`, `$VAR`),
//! made absolute and canonical before it becomes a rule, so a symlink swapped in later cannot move a
//! rule. Each Landlock feature the policy asks for is checked against the kernel's ABI: a required
//! one the kernel lacks fails the run (fail closed), a best-effort one becomes a gap. The `Rules` are
//! what the pre-exec helper enforces; the gaps are what the report, `doctor` and `policy show` say
//! about them. `preview` is the same resolution without a job, for `policy show` and `doctor`.
//! This file holds the `Plan` the helper gets and `build`, which makes the rules for one job; the
//! stages of the resolution are in the files beside it.

mod carve;
#[cfg(test)]
mod carve_tests;
mod check;
mod create;
mod devices;
mod expand;
mod features;
mod gaps;
mod job;
mod limits;
mod listing;
mod lookup;
#[cfg(test)]
mod lookup_tests;
mod preview;
mod resolve;
mod resolved;
mod rules;
mod sockets;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::job::record::SandboxReport;
use crate::sandbox::made::Made;
use crate::sandbox::policy::Loaded;
use crate::sandbox::probe;

pub use check::check_kernel;
pub use devices::{DEVICES, DEVICE_READS};
pub(crate) use expand::expand;
pub use features::{features, Feature, FeatureState, Kernel};
pub use gaps::NO_SANDBOX;
pub use job::{allowed_write, Job};
pub use limits::{Limit, Resource};
pub use preview::{preview, Preview};
pub use resolved::{Access, Outcome, Resolved};
pub use rules::Rules;
pub use sockets::{Judge, Route, Sockets};

use create::create;
use gaps::gaps;
use job::{add_job_paths, refuse_opening_home, refuse_opening_stores};
use resolve::resolve_policy_paths;
use resolved::reads_everything;
pub(crate) use rules::rules;

/// What the pre-exec helper does before it execs CMD.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// The build that made the plan (`exec::BUILD`): the helper applies only its own build's.
    #[serde(default)]
    pub build: String,
    /// `None` with `--no-sandbox`.
    pub rules: Option<Rules>,
    /// Descriptor on which the helper reports why CMD could not be executed.
    pub status_fd: i32,
    /// Descriptor the helper reads one byte from before it execs CMD (the supervisor's release).
    pub go_fd: i32,
    /// Interactive mode: CMD gets its own process group on its terminal, under a monitor.
    #[serde(default)]
    pub job_control: bool,
    /// The job has no cgroup: a sentinel ends what is left of it should its supervisor be killed
    /// (sandbox/exec/sentinel.rs; where the rules scope signals).
    #[serde(default)]
    pub sentinel: bool,
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
        return Ok(unsandboxed(loaded));
    }
    let abi = check_kernel(loaded)?;
    let fail = |message: String| Error::Policy {
        source_name: loaded.name.clone(),
        message,
    };

    if let Some(why) = crate::sandbox::credentials::unusable() {
        return Err(fail(why));
    }
    let mut resolved = resolve_policy_paths(policy);
    let allow_write = add_job_paths(&mut resolved, job, policy)?;
    refuse_opening_home(&mut resolved, job);
    refuse_opening_stores(&mut resolved);
    // Every path is checked before anything is made.
    if let Some(r) = resolved.iter().find(|r| r.outcome == Outcome::Failed) {
        return Err(fail(refusal(r)));
    }
    let mut made = Made::default();
    let resolved = create_missing(resolved, &mut made, &fail)?;
    let notes = notes(&resolved);
    let kernel = Kernel::probe();
    let states = features(policy, kernel);
    let rules = rules(policy, abi, &resolved, &states);
    let report = SandboxReport {
        enforced: true,
        tier: None,
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

/// What `build` makes of `--no-sandbox`: no rules, and the report saying so.
fn unsandboxed(loaded: &Loaded) -> Built {
    let report = SandboxReport {
        enforced: false,
        tier: None,
        landlock_abi: probe::landlock_abi(),
        policy: loaded.name.clone(),
        policy_ref: Some(loaded.reference.clone()),
        gaps: vec![NO_SANDBOX.to_string()],
        allow_write: Vec::new(),
        refused: None,
    };
    Built {
        rules: None,
        report,
        notes: Vec::new(),
        made: Made::default(),
    }
}

/// Why `r`, a path that failed, fails the run.
fn refusal(r: &Resolved) -> String {
    let what = match r.access {
        Access::Read | Access::List => "read path",
        Access::Write | Access::Worktree => "write path",
        Access::WriteFile => "writable file",
        Access::Device => "device",
        Access::Connect => "unix socket",
        Access::Deny => "denied path",
    };
    let detail = r.detail.clone().unwrap_or_default();
    format!("{what} {}: {detail}", r.written)
}

/// Makes every `WillCreate` path of `resolved`, recording it in `made`; a failure undoes what was
/// made and is the error `fail` makes of it.
fn create_missing(
    resolved: Vec<Resolved>,
    made: &mut Made,
    fail: &dyn Fn(String) -> Error,
) -> Result<Vec<Resolved>> {
    let mut created = Vec::with_capacity(resolved.len());
    for r in resolved {
        if r.outcome != Outcome::WillCreate {
            created.push(r);
            continue;
        }
        let written = r.written.clone();
        match create(r, made) {
            Ok(r) => created.push(r),
            Err(e) => {
                made.undo();
                return Err(fail(format!("write path {written}: {e}")));
            }
        }
    }
    Ok(created)
}

/// What the start line says of `resolved`: the skips it notes and what was created.
fn notes(resolved: &[Resolved]) -> Vec<String> {
    let mut notes = Vec::new();
    for r in resolved {
        let detail = r.detail.clone().unwrap_or_default();
        match r.outcome {
            Outcome::Skipped if r.noted => notes.push(format!("{} skipped: {detail}", r.written)),
            Outcome::Created => notes.push(detail),
            _ => {}
        }
    }
    notes
}
