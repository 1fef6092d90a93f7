//! The look that gathers the facts: the job's repository read in-process (executing nothing
//! planted there), its branch imported unless only surveying, its other refs and its standing
//! against the project checked. The import does not wait on the rest of the read: where the work
//! tree cannot be judged (an untracked `.gitignore`, a pattern file too large), the branch is read
//! alone and its commits come home all the same; what the worktree holds decides only whether it
//! goes. Never decides, never deletes.

use std::fs;

use crate::error::Error;

use super::bounded::{branch_tip_bounded, inspect_bounded};
use super::branch_tip::{last_import, note_import};
use super::counted::counted;
use super::facts::{Branch, Facts, Tree};
use super::job::{Job, Look};
use super::nested_jobs::add_nested_jobs;
use super::refs::{project_refs, unimported_refs};
use crate::worktree::checkouts;
use crate::worktree::import;
use crate::worktree::large_files::{self, Bring, Outside};

/// Reads the job's repository (in-process, executing nothing planted there), imports its branch
/// (unless only surveying), and checks its other refs and its standing against the project.
pub(super) fn gather(job: &Job, look: Look) -> Facts {
    let tree = if fs::symlink_metadata(job.path).is_ok() {
        Tree::Present(
            inspect_bounded(job.path, &job.id.branch(), job.project, job.job_dir).map(
                |mut insp| {
                    // And the jobs started inside it, whose state is in its record directory.
                    add_nested_jobs(&mut insp, job.job_dir);
                    Box::new(insp)
                },
            ),
        )
    } else if job.removed {
        Tree::Removed
    } else {
        Tree::Missing
    };
    let (project_branch, pin) = match project_refs(job) {
        Ok(refs) => refs,
        Err(e) => (None, Some(format!("(unreadable: {e})"))),
    };
    let tip = tip_of(job, &tree);
    let (branch_state, copied) = branch_of(job, look, &tree, &tip, project_branch.as_deref());
    let branch_held = held(job, &branch_state);
    let unimported = match &tree {
        Tree::Present(Ok(insp)) => {
            unimported_refs(job, insp).unwrap_or_else(|e| vec![format!("(cannot check: {e})")])
        }
        _ => Vec::new(),
    };
    let branch_after = match (&tree, &branch_state, tip) {
        (Tree::Present(_), Branch::AtBase | Branch::Commits { .. }, Ok(tip))
            if look == Look::Import =>
        {
            tip
        }
        _ => project_branch,
    };
    let outside = match &tree {
        Tree::Present(Ok(_)) => {
            // The new commits' LFS pointers are read in the project: only once they are there.
            let commits = match &branch_state {
                Branch::Commits { .. } => branch_after.as_deref().map(|tip| (job.base, tip)),
                _ => None,
            };
            let bring = match look {
                Look::Import => Bring::Home,
                Look::Survey => Bring::Nothing,
            };
            large_files::look(job.project, job.path, commits, bring)
        }
        _ => Outside::default(),
    };
    Facts {
        life: job.life,
        // A command `isolate exec` runs there.
        in_use: !crate::job::execs::live(job.job_dir).is_empty(),
        tree,
        branch: branch_state,
        copied,
        pin,
        branch_after,
        unimported,
        outside,
        branch_held,
        settling: job.settling,
    }
}

/// The tip of the job's branch in its repository (`None`: the job deleted it): the inspection's, or
/// where the inspection failed, the branch read alone (not after a read that did not end: the
/// repository can hold what blocks); or why it cannot be read.
fn tip_of(job: &Job, tree: &Tree) -> Result<Option<String>, String> {
    match tree {
        Tree::Present(Ok(insp)) => Ok(insp.branch_tip.clone()),
        Tree::Present(Err(e @ Error::InspectTimedOut { .. })) => Err(e.to_string()),
        Tree::Present(Err(e)) => {
            branch_tip_bounded(job.path, &job.id.branch(), job.project).map_err(|_| e.to_string())
        }
        Tree::Missing | Tree::Removed => Ok(None),
    }
}

/// The job's branch in the project (imported first unless only surveying) from its tip `tip`, and
/// whether the import copied objects.
fn branch_of(
    job: &Job,
    look: Look,
    tree: &Tree,
    tip: &Result<Option<String>, String>,
    project_branch: Option<&str>,
) -> (Branch, bool) {
    let branch = job.id.branch();
    match tree {
        Tree::Present(_) => match tip {
            Ok(Some(tip)) => from_tip(job, look, tip, project_branch),
            Ok(None) => (
                Branch::Unknown(format!("the job deleted its branch {branch}")),
                false,
            ),
            Err(why) => (Branch::Unknown(why.clone()), false),
        },
        // Without the directory, what the project's branch already holds is what counts.
        Tree::Missing | Tree::Removed => match project_branch {
            Some(tip) => (counted(job, look, tip, None), false),
            None => (Branch::Gone, false),
        },
    }
}

/// The job's branch from its tip `tip` in the job's repository, against the project's `current`.
fn from_tip(job: &Job, look: Look, tip: &str, current: Option<&str>) -> (Branch, bool) {
    let branch = job.id.branch();
    match current {
        // Someone moved the project's branch while the job ran: never overwrite it.
        Some(current) if current != last_import(job) && current != tip => (
            Branch::Unknown(format!(
                "the project's {branch} moved to {current} (isolate left it at {}); not overwritten",
                last_import(job)
            )),
            false,
        ),
        Some(current) if current == tip => (counted(job, look, tip, None), false),
        _ if look == Look::Survey => {
            if tip == job.base {
                (Branch::AtBase, false)
            } else {
                (Branch::ToImport, false)
            }
        }
        // Deleted in the project while the job ran: created again, so the work is not lost.
        current => {
            let old = current.unwrap_or(ZERO);
            let objects = job.path.join(".git/objects");
            match import::import(job.project, &objects, &branch, tip, old, job.base) {
                Ok(done) => {
                    if done.copied {
                        note_import(job.job_dir, tip);
                    }
                    (counted(job, look, tip, Some(done.commits)), done.copied)
                }
                Err(e) => (Branch::Unknown(e.to_string()), false),
            }
        }
    }
}

/// A checkout of the project that holds the job's branch, asked only when the branch could go.
fn held(job: &Job, branch_state: &Branch) -> Option<String> {
    let may_go = match branch_state {
        Branch::AtBase => true,
        Branch::Commits {
            standing: Some(standing),
            ..
        } => job.settling.settles_landed() && standing.landed(),
        _ => false,
    };
    if !may_go {
        return None;
    }
    let branch = job.id.branch();
    match checkouts::holding(job.project, &format!("refs/heads/{branch}")) {
        Ok(held) => held.map(|h| h.to_string()),
        Err(e) => Some(format!(
            "perhaps checked out (cannot list the checkouts: {e})"
        )),
    }
}

/// The null object id: "the ref must not exist" for `update-ref`.
const ZERO: &str = "0000000000000000000000000000000000000000";
