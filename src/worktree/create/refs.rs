//! The refs a job's worktree has in the project: its branch and the base pin, made together and
//! removed only while they still point at base. Never deletes a ref that moved.

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::id::JobId;

/// The base pin of a job: keeps a `git gc` in the project from pruning what the worktree borrows.
pub fn pin_ref(id: &JobId) -> String {
    format!("refs/isolate/{id}/base")
}

/// Removes what `create` made for job `id`: the directory (made fresh and at base, so nothing of the
/// user's is in it) and the two refs, each only if it still points at base.
pub fn undo(project: &Project, id: &JobId, path: &Path, base: &str) {
    let _ = fs::remove_dir_all(path);
    delete_refs(project, id, base);
}

/// Deletes the job's branch and pin in the project, each only if it still points at `base`.
pub(super) fn delete_refs(project: &Project, id: &JobId, base: &str) {
    let branch = format!("refs/heads/{}", id.branch());
    for reference in [branch, pin_ref(id)] {
        let _ = git::run(
            &project.top,
            ["update-ref", "-d", "--end-of-options", &reference, base],
        );
    }
}

/// `refs/heads/isolate/<id>` and the base pin, created together in one transaction. `false` when
/// either exists already.
pub(super) fn project_refs(project: &Project, id: &JobId, base: &str) -> Result<bool> {
    let stdin = format!(
        "create refs/heads/{} {base}\ncreate {} {base}\n",
        id.branch(),
        pin_ref(id)
    );
    let out = git::try_run_with_input(&project.top, ["update-ref", "--stdin"], stdin.as_bytes())?;
    if out.status.success() {
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("already exists") {
        return Ok(false);
    }
    Err(Error::git(
        "update-ref --stdin (the job's branch and base pin)",
        out.status.code(),
        &out.stderr,
    ))
}
