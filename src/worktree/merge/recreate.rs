//! The job's worktree made again for a conflict, after isolate removed it: the repository, the
//! record saying it is back, and the branch checked out in the sandbox. Never checks out outside
//! the sandbox: the tree is the job's.

use std::path::Path;

use crate::error::{Error, Result};
use crate::git;
use crate::job::record::Record;
use crate::job::store;
use crate::sandbox::policy::Loaded;
use crate::worktree::cleanup::{self, Recorded};
use crate::worktree::create;
use crate::worktree::sandboxed;

/// The job's worktree, made again at its place from the job's branch: a fresh repository borrowing
/// the project's objects, its base pinned again, checked out at `tip` in the sandbox (the tree is
/// the job's: its attributes choose filters). The record says the worktree is back.
pub(super) fn recreate(
    recorded: &Recorded,
    record: &Record,
    job_dir: &Path,
    policy: &Loaded,
    tip: &str,
) -> Result<()> {
    let project = &recorded.project;
    let path = recorded.checked_path()?;
    std::fs::create_dir_all(&recorded.key_dir)
        .map_err(|e| Error::io("cannot create", &recorded.key_dir, e))?;
    create::recreate(project, &recorded.id, path, &recorded.worktree.base)?;
    let mut back = record.clone();
    if let Some(wt) = back.worktree.as_mut() {
        wt.removed = false;
        wt.branch_kept = true;
        wt.branch_tip = Some(tip.to_string());
        wt.reason = "made again by isolate merge for a conflict".into();
        wt.handoff = Some(format!(
            "isolate run --resume {} -- \"$SHELL\"",
            recorded.id
        ));
    }
    store::write_record(job_dir, &back)?;
    cleanup::note_import(job_dir, tip);
    let branch = recorded.id.branch();
    let checkout: Vec<&str> = git::NO_HOOKS
        .into_iter()
        .chain([
            "-c",
            "checkout.workers=0",
            "checkout",
            "--quiet",
            "--force",
            "-B",
            &branch,
            tip,
            "--",
        ])
        .collect();
    let out = sandboxed::git(project, path, policy, &checkout)?;
    if out.status != 0 {
        return Err(Error::RecreatedCheckout {
            branch,
            path: path.to_path_buf(),
            stderr: out.stderr.trim().to_string(),
        });
    }
    Ok(())
}
