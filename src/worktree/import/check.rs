//! The checks of an import in the project: what the job's commits reach is in the project's own
//! store, and how many commits the branch holds beyond base. Never consults the job's objects.

use crate::error::{Error, GitProblem, Result};
use crate::git;
use crate::git::project::Project;

pub(super) fn is_null(id: &str) -> bool {
    id.bytes().all(|b| b == b'0')
}

/// Every object `tip` reaches beyond `known` is in the project's own store (the job's is not
/// consulted: no alternate is given), or the import is refused and nothing moves.
pub(super) fn connected(project: &Project, tip: &str, known: &str) -> Result<()> {
    let not = format!("^{known}");
    let out = git::try_run(
        &project.top,
        [
            "rev-list",
            "--objects",
            "--missing=error",
            "--quiet",
            "--end-of-options",
            tip,
            &not,
        ],
    )?;
    if out.status.success() {
        return Ok(());
    }
    let why = String::from_utf8_lossy(&out.stderr);
    Err(Error::ObjectsNotReceived {
        tip: tip.to_string(),
        why: why
            .trim()
            .lines()
            .next()
            .unwrap_or("rev-list failed")
            .to_string(),
    })
}

/// Commits of `base..tip` in the project (no git call when they are the same commit).
pub fn count(project: &Project, base: &str, tip: &str) -> Result<usize> {
    if base == tip {
        return Ok(0);
    }
    let range = format!("{base}..{tip}");
    let count = git::run(
        &project.top,
        ["rev-list", "--count", "--end-of-options", &range],
    )?
    .text();
    count.parse().map_err(|_| {
        Error::from(GitProblem::GitUnreadable {
            args: "rev-list --count",
            printed: count,
        })
    })
}
