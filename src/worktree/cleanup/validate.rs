//! The record's claims checked against the disk before anything is deleted. Never follows what the
//! job wrote: its alternates file is read as untrusted.

use std::fs;
use std::path::PathBuf;

use super::facts::{Facts, Tree};
use super::job::Job;
use crate::job::id::JobId;
use crate::worktree::create::pin_ref;

/// The record's claims checked against the disk (spec/worktrees.md, "Records"): the directory sits
/// directly in the project's worktree directory under the job's id, the base pin isolate made holds
/// the record's base, and the repository borrows this project's objects.
pub fn validate(job: &Job, facts: &Facts) -> std::result::Result<(), String> {
    let expected: PathBuf = job.key_dir.join(job.id.as_str());
    let name = job
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if JobId::parse(name).as_ref() != Some(job.id) || job.path != expected {
        return Err(format!(
            "{} is not {}",
            job.path.display(),
            expected.display()
        ));
    }
    let pin_holds = match (&facts.tree, facts.pin.as_deref()) {
        (_, Some(pin)) => pin == job.base,
        // Removed with its worktree when the job ended.
        (Tree::Removed, None) => true,
        (_, None) => false,
    };
    if !pin_holds {
        return Err(format!(
            "the project's {} is {}, not the record's base {}",
            pin_ref(job.id),
            facts.pin.as_deref().unwrap_or("missing"),
            job.base
        ));
    }
    if !matches!(facts.tree, Tree::Present(_)) {
        return Ok(());
    }
    let meta = fs::symlink_metadata(job.path).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", job.path.display()));
    }
    let alternates = job.path.join(".git/objects/info/alternates");
    // The job wrote this file: a FIFO or a link there must not hang or redirect the check.
    let text = crate::textfile::read_untrusted(&alternates, 64 << 10)
        .map_err(|e| format!("{}: {e}", alternates.display()))?;
    let theirs =
        fs::canonicalize(text.trim_end_matches('\n')).map_err(|e| format!("alternates: {e}"))?;
    let ours = fs::canonicalize(&job.project.objects).map_err(|e| e.to_string())?;
    if theirs != ours {
        return Err(format!(
            "its alternates point at {}, not at the project",
            theirs.display()
        ));
    }
    Ok(())
}
