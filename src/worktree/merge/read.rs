//! The reads of the project a merge takes: the merged tree, refs, commit counts and the files that
//! differ. Never writes a ref.

use super::plan::Change;
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;

/// `git merge-tree --write-tree OURS THEIRS` in the project: the merged tree, or `None` when they
/// conflict.
pub(super) fn merge_tree(project: &Project, ours: &str, theirs: &str) -> Result<Option<String>> {
    let out = git::try_run(
        &project.top,
        [
            "merge-tree",
            "--write-tree",
            "--no-messages",
            "--end-of-options",
            ours,
            theirs,
        ],
    )?;
    match out.status.code() {
        Some(0) => Ok(out.text().lines().next().map(str::to_string)),
        Some(1) => Ok(None),
        code => Err(Error::git("merge-tree --write-tree", code, &out.stderr)),
    }
}

pub(super) fn rev(project: &Project, reference: &str) -> Result<String> {
    Ok(git::run(
        &project.top,
        ["rev-parse", "--verify", "--end-of-options", reference],
    )?
    .text())
}

/// What differs from `from` to `to` (commits or trees), one change a path. `--no-renames`: a rename
/// shows as the deletion and the addition it is, whatever the user's `diff.renames` (a rename
/// would list the new name only).
pub(super) fn changes(project: &Project, from: &str, to: &str) -> Result<Vec<Change>> {
    let out = git::run(
        &project.top,
        [
            "diff",
            "--name-status",
            "--no-renames",
            "-z",
            "--end-of-options",
            from,
            to,
        ],
    )?;
    let mut fields = out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty());
    let mut changes = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        changes.push(Change {
            status: status.first().map(|&b| b as char).unwrap_or('M'),
            path: String::from_utf8_lossy(path).into_owned(),
        });
    }
    Ok(changes)
}
