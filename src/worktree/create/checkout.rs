//! The new worktree checked out at base, with parallel checkout. Only ever on a repository isolate
//! just made: nothing of the job's is there yet to run.

use std::path::Path;

use crate::error::Result;
use crate::git;

/// Checks out `base` on `branch` with parallel checkout (one worker per core).
pub(super) fn checkout(path: &Path, branch: &str, base: &str) -> Result<()> {
    git::run(
        path,
        [
            "-c",
            "checkout.workers=0",
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            "--force",
            "-B",
            branch,
            base,
            "--",
        ],
    )
    .map(|_| ())
}
