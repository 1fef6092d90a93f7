//! The new worktree checked out at base, with parallel checkout and no submodule recursion. Only
//! ever on a repository isolate just made: nothing of the job's is there yet to run. A base only
//! jobs vouch for is checked out with no attributes at all (filters.rs).

use std::path::Path;

use super::filters::no_attributes;
use crate::error::Result;
use crate::git;

/// Whose history the base is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Base {
    /// Reached by a ref of the project's own: its attributes and filters apply as in a checkout.
    Vouched,
    /// Reached only by jobs' refs: no attribute applies, no filter driver runs.
    JobsOnly,
}

/// Checks out `base` on `branch` with parallel checkout (one worker per core); with `progress`,
/// git's own progress line on isolate's stderr (a terminal).
pub(super) fn checkout(
    path: &Path,
    branch: &str,
    base: &str,
    whose: Base,
    (object_format, progress): (&str, bool),
) -> Result<()> {
    let mut cmd = git::command(path);
    if whose == Base::JobsOnly {
        cmd.args(no_attributes(object_format))
            .env("GIT_ATTR_NOSYSTEM", "1");
    }
    cmd.args([
        "-c",
        "checkout.workers=0",
        "-c",
        "advice.detachedHead=false",
        "-c",
        "submodule.recurse=false",
        "checkout",
        "--quiet",
        match progress {
            true => "--progress",
            false => "--no-progress",
        },
        "--force",
        "--no-recurse-submodules",
        "-B",
        branch,
        base,
        "--",
    ]);
    match progress {
        true => git::run_on_terminal(cmd),
        false => git::run_command(cmd).map(|_| ()),
    }
}
