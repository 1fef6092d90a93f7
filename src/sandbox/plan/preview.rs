//! The preview: a policy resolved on this machine without a job, for `policy show` and `doctor`.
//! It creates nothing.

use std::path::PathBuf;

use serde::Serialize;

use super::check::check;
use super::job::refuse_opening_stores;
use super::resolve::resolve_policy_paths;
use super::resolved::reads_everything;
use super::{features, gaps, Access, FeatureState, Kernel, Outcome, Resolved, DEVICES};
use crate::sandbox::policy::Loaded;

/// A policy resolved on this machine without a job: what `policy show` and `doctor` print.
#[derive(Debug, Clone, Serialize)]
pub struct Preview {
    /// The ABI isolate would use (capped by `ISOLATE_LANDLOCK_ABI_MAX`).
    pub landlock_abi: Option<u32>,
    pub paths: Vec<Resolved>,
    pub features: Vec<FeatureState>,
    pub gaps: Vec<String>,
    /// Said in the start line of a run.
    pub notes: Vec<String>,
    /// What would make a run with this policy fail here.
    pub problems: Vec<String>,
}

/// `loaded` resolved as a run would resolve it, creating nothing; the job's own paths are shown as
/// `<worktree>`, `<tmpdir>` and `<project>`.
pub fn preview(loaded: &Loaded) -> Preview {
    let kernel = Kernel::probe();
    let abi = kernel.landlock_abi;
    let policy = &loaded.policy;
    let mut paths = resolve_policy_paths(policy);
    refuse_opening_stores(&mut paths);
    let placeholder = |written: &str, access, detail: &str| Resolved {
        written: written.to_string(),
        access,
        path: None,
        outcome: Outcome::Granted,
        detail: Some(detail.to_string()),
        noted: false,
    };
    paths.extend([
        placeholder(
            "<worktree>",
            Access::Write,
            "the job's worktree (with --worktree)",
        ),
        placeholder("<tmpdir>", Access::Write, "the job's private TMPDIR"),
        placeholder(
            "<project>",
            Access::Read,
            "the project (top level, git directory, objects, hooks); without --worktree the current directory",
        ),
    ]);
    paths.extend(DEVICES.iter().map(|device| Resolved {
        path: Some(PathBuf::from(device)),
        detail: None,
        ..placeholder(device, Access::Device, "")
    }));
    let mut notes = Vec::new();
    let mut problems = Vec::new();
    for r in &paths {
        let detail = r.detail.clone().unwrap_or_default();
        match r.outcome {
            Outcome::Failed => problems.push(format!("{}: {detail}", r.written)),
            Outcome::Skipped if r.noted => notes.push(format!("{} skipped: {detail}", r.written)),
            _ => {}
        }
    }
    problems.extend(crate::sandbox::credentials::unusable());
    if let Err(e) = check(loaded, kernel) {
        problems.push(e.to_string());
    }
    let states = features(policy, kernel);
    let gaps = gaps(policy, kernel, &states, reads_everything(&paths));
    Preview {
        landlock_abi: abi,
        paths,
        features: states,
        gaps,
        notes,
        problems,
    }
}
