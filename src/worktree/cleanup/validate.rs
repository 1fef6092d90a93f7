//! The record's claims checked against the disk before anything is deleted, and how they can
//! differ. Never follows what the job wrote: its alternates file is read as untrusted.

use std::fmt;
use std::fs;
use std::path::PathBuf;

use super::facts::{Facts, Tree};
use super::job::Job;
use crate::job::id::JobId;
use crate::worktree::create::pin_ref;

/// How the record's claims differ from the disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// The worktree is not where isolate puts the job's.
    Place {
        path: PathBuf,
        expected: PathBuf,
    },
    /// The project's base pin (`None`: missing) does not hold the record's base.
    Pin {
        pin: String,
        found: Option<String>,
        base: String,
    },
    NotADirectory(PathBuf),
    /// The worktree could not be looked at (why).
    Unstatable {
        path: PathBuf,
        why: String,
    },
    /// The job's alternates file could not be read (why).
    AlternatesUnreadable {
        path: PathBuf,
        why: String,
    },
    /// What the job's alternates file names does not resolve (why).
    AlternatesUnresolved {
        why: String,
    },
    /// The project's own object store does not resolve (why).
    ObjectsUnresolved {
        path: PathBuf,
        why: String,
    },
    /// The repository borrows the objects of another store than the project's.
    Alternates(PathBuf),
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Place { path, expected } => {
                write!(f, "{} is not {}", path.display(), expected.display())
            }
            Mismatch::Pin { pin, found, base } => write!(
                f,
                "the project's {pin} is {}, not the record's base {base}",
                found.as_deref().unwrap_or("missing")
            ),
            Mismatch::NotADirectory(path) => write!(f, "{} is not a directory", path.display()),
            Mismatch::Unstatable { why, .. } | Mismatch::ObjectsUnresolved { why, .. } => {
                f.write_str(why)
            }
            Mismatch::AlternatesUnreadable { path, why } => write!(f, "{}: {why}", path.display()),
            Mismatch::AlternatesUnresolved { why } => write!(f, "alternates: {why}"),
            Mismatch::Alternates(theirs) => write!(
                f,
                "its alternates point at {}, not at the project",
                theirs.display()
            ),
        }
    }
}

/// The record's claims checked against the disk (docs/worktrees.md, "Records"): the directory sits
/// directly in the project's worktree directory under the job's id, the base pin isolate made holds
/// the record's base, and the repository borrows this project's objects.
pub fn validate(job: &Job, facts: &Facts) -> Result<(), Mismatch> {
    let expected: PathBuf = job.key_dir.join(job.id.as_str());
    let name = job
        .path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if JobId::parse(name).as_ref() != Some(job.id) || job.path != expected {
        return Err(Mismatch::Place {
            path: job.path.to_path_buf(),
            expected,
        });
    }
    let pin_holds = match (&facts.tree, facts.pin.as_deref()) {
        (_, Some(pin)) => pin == job.base,
        // Removed with its worktree when the job ended.
        (Tree::Removed, None) => true,
        (_, None) => false,
    };
    if !pin_holds {
        return Err(Mismatch::Pin {
            pin: pin_ref(job.id),
            found: facts.pin.clone(),
            base: job.base.to_string(),
        });
    }
    if !matches!(facts.tree, Tree::Present(_)) {
        return Ok(());
    }
    let meta = fs::symlink_metadata(job.path).map_err(|e| Mismatch::Unstatable {
        path: job.path.to_path_buf(),
        why: e.to_string(),
    })?;
    if !meta.is_dir() {
        return Err(Mismatch::NotADirectory(job.path.to_path_buf()));
    }
    let alternates = job.path.join(".git/objects/info/alternates");
    // The job wrote this file: a FIFO or a link there must not hang or redirect the check.
    let text = crate::textfile::read_untrusted(&alternates, 64 << 10).map_err(|e| {
        Mismatch::AlternatesUnreadable {
            path: alternates.clone(),
            why: e.to_string(),
        }
    })?;
    let theirs = fs::canonicalize(text.trim_end_matches('\n'))
        .map_err(|e| Mismatch::AlternatesUnresolved { why: e.to_string() })?;
    let ours = fs::canonicalize(&job.project.objects).map_err(|e| Mismatch::ObjectsUnresolved {
        path: job.project.objects.clone(),
        why: e.to_string(),
    })?;
    if theirs != ours {
        return Err(Mismatch::Alternates(theirs));
    }
    Ok(())
}
