//! The refs a look at a job reads: the project's branch of the job and its base pin, and the job's
//! other refs whose commits the project lacks. Reads only: never moves a ref.

use super::bounded::read_bounded;
use super::job::Job;
use crate::error::{Error, Result};
use crate::worktree::create::pin_ref;
use crate::worktree::inspect::{self, Inspection};

/// The project's values of the job's branch and base pin, in one read.
pub(super) fn project_refs(job: &Job) -> Result<(Option<String>, Option<String>)> {
    let branch = format!("refs/heads/{}", job.id.branch());
    let pin = pin_ref(job.id);
    let [branch, pin] = job.project.refs([&branch, &pin])?;
    Ok((branch, pin))
}

/// Other refs (and a detached HEAD) of the job whose commits the project does not have, commits
/// only its reflogs reach, and repositories inside it holding work.
pub(super) fn unimported_refs(job: &Job, insp: &Inspection) -> Result<Vec<String>> {
    let mut named: Vec<(String, String)> = insp.other_refs.clone();
    if insp.head_branch.is_none() {
        if let Some(head) = &insp.head_commit {
            named.push(("HEAD (detached)".into(), head.clone()));
        }
    }
    let ids: Vec<String> = named.iter().map(|(_, id)| id.clone()).collect();
    let missing =
        inspect::missing_from(&job.project.git_dir, &ids).map_err(|e| Error::Inspect {
            path: job.path.to_path_buf(),
            source: Box::new(e),
        })?;
    let mut tips = ids;
    tips.extend(insp.branch_tip.iter().chain(&insp.head_commit).cloned());
    let project_git_dir = job.project.git_dir.clone();
    let reflog_only = read_bounded(job.path, job.project, move |path| {
        inspect::reflog_only(path, &project_git_dir, &tips)
    })?;
    Ok(named
        .into_iter()
        .filter(|(_, id)| missing.contains(id))
        .map(|(name, _)| name)
        .chain(
            reflog_only
                .iter()
                .map(|id| format!("a commit only in a reflog ({})", &id[..12.min(id.len())])),
        )
        // Repositories inside the worktree (gitlinks) holding work.
        .chain(insp.nested.iter().cloned())
        .collect())
}
