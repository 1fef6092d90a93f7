//! Where a job's branch stands against the project branch, read in the project only: how many of its
//! commits the project branch lacks, counted by patch as `git cherry` sees them (a rebase or
//! cherry-pick of them counts as merged; a merge commit always counts, for git cherry does not see
//! merges), and none when merging it would change nothing (a squash merge); and how many commits of
//! the project branch it lacks. A branch whose every patch the project branch has is landed only
//! if merging it would change nothing too: git's patch ids leave whitespace out. `rm`, `prune`,
//! `worktrees` and `merge` all read it here.

use std::path::Path;

use crate::error::{Error, GitProblem, Result};
use crate::git;

/// A job's branch against the project branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// The branch's commits the project branch does not have by id.
    pub ahead: usize,
    /// The branch's commits whose change the project branch does not have (0: it has landed).
    pub unmerged: usize,
    /// The project branch's commits the job's branch does not have.
    pub behind: usize,
}

impl Standing {
    /// The project branch has all of the job's work.
    pub fn landed(&self) -> bool {
        self.unmerged == 0
    }
}

/// `branch` against `target` (each a full ref name or a commit id), in the project at `top`.
pub fn standing(top: &Path, target: &str, branch: &str) -> Result<Standing> {
    let (behind, ahead) = left_right(top, target, branch)?;
    let mut unmerged = 0;
    if ahead > 0 {
        // Commits whose patch the project branch does not have ("+" in git cherry). git cherry
        // passes over merge commits, and a merge can hold work of its own (a resolution, an amend):
        // each counts as unmerged until the tree says otherwise.
        let cherry = git::run(top, ["cherry", "--end-of-options", target, branch])?.text();
        unmerged = cherry.lines().filter(|l| l.starts_with('+')).count();
        let merges = git::run(
            top,
            [
                "rev-list",
                "--count",
                "--merges",
                "--end-of-options",
                &format!("{target}..{branch}"),
            ],
        )?
        .text();
        unmerged += merges.parse::<usize>().unwrap_or(1);
        let nothing = merges_to_nothing(top, target, branch)?;
        if unmerged > 0 && nothing {
            // A squash merge: no single commit matches, but merging would change nothing.
            unmerged = 0;
        } else if unmerged == 0 && !nothing {
            // Every patch matched one of the project branch's, yet merging would change it: a
            // patch id is made with the whitespace of each line left out, so a commit that differs
            // from the project's only there (an indentation Python reads, the spaces of a string)
            // matched. Which commits did is not known: all of them count.
            unmerged = ahead;
        }
    }
    Ok(Standing {
        ahead,
        unmerged,
        behind,
    })
}

/// Commits of `a` not in `b`, and of `b` not in `a` (each a full ref name or a commit id), in the
/// project at `top`.
pub fn left_right(top: &Path, a: &str, b: &str) -> Result<(usize, usize)> {
    let text = git::run(
        top,
        [
            "rev-list",
            "--left-right",
            "--count",
            "--end-of-options",
            &format!("{a}...{b}"),
        ],
    )?
    .text();
    let mut parts = text.split_whitespace().map(str::parse::<usize>);
    match (parts.next(), parts.next()) {
        (Some(Ok(left)), Some(Ok(right))) => Ok((left, right)),
        _ => Err(Error::from(GitProblem::GitUnreadable {
            args: "rev-list --left-right --count",
            printed: text,
        })),
    }
}

/// Whether merging `branch` into `target` would leave `target`'s tree as it is (`git merge-tree`
/// writes only tree objects and touches no ref, index or checkout).
fn merges_to_nothing(top: &Path, target: &str, branch: &str) -> Result<bool> {
    let merged = git::try_run(
        top,
        [
            "merge-tree",
            "--write-tree",
            "--no-messages",
            "--end-of-options",
            target,
            branch,
        ],
    )?;
    if !merged.status.success() {
        return Ok(false);
    }
    let tree = git::run(
        top,
        [
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{target}^{{tree}}"),
        ],
    )?
    .text();
    Ok(merged.text().lines().next() == Some(tree.as_str()))
}
