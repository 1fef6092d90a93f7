//! The worktree of a job made again at its place after isolate removed it, for `merge` to make a
//! conflict in. Never moves the project's branch of the job.

use std::fs;
use std::path::Path;

use super::init::init;
use super::refs::pin_ref;
use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::id::JobId;

/// Makes the worktree of job `id` again at `path` (which must not exist), after isolate removed it:
/// a fresh repository borrowing the project's objects, on the job's branch (unborn: the caller
/// checks out the branch's tip, in the sandbox, as the tree is the job's), and the base pin again.
/// The project's branch of the job is left as it is.
pub fn recreate(project: &Project, id: &JobId, path: &Path, base: &str) -> Result<()> {
    let pin = pin_ref(id);
    let current = git::try_run(
        &project.top,
        ["rev-parse", "--verify", "--quiet", "--end-of-options", &pin],
    )?;
    if !current.status.success() {
        git::run(
            &project.top,
            ["update-ref", "--end-of-options", &pin, base, ""],
        )?;
    } else if current.text() != base {
        return Err(Error::PinMoved {
            pin,
            found: current.text(),
            base: base.to_string(),
        });
    }
    fs::create_dir(path).map_err(|e| Error::io("cannot create the worktree", path, e))?;
    if let Err(e) = init(project, id, path, &[]) {
        let _ = fs::remove_dir_all(path);
        return Err(e);
    }
    Ok(())
}
