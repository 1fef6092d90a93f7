//! The project's branch of a job counted: its commits beyond base and, where it is asked for,
//! where they stand against the project branch. Reads the project only, never the job's repository.

use super::facts::Branch;
use super::job::{Job, Look};
use crate::git;
use crate::git::project::Project;
use crate::worktree::import;
use crate::worktree::standing;

/// The project's branch at `tip`: its commits beyond base (`commits` when the import counted them),
/// and, for `rm`, `prune` and a survey, where they stand against the project branch.
pub(super) fn counted(job: &Job, look: Look, tip: &str, commits: Option<usize>) -> Branch {
    if tip == job.base {
        return Branch::AtBase;
    }
    let count = match commits {
        Some(n) => n,
        None => match import::count(job.project, job.base, tip) {
            Ok(n) => n,
            Err(e) => return Branch::Unknown(e.to_string()),
        },
    };
    if count == 0 {
        return Branch::AtBase;
    }
    let standing = match job.project_branch {
        Some(target) if job.settling.settles_landed() || look == Look::Survey => {
            let target = format!("refs/heads/{target}");
            match standing::standing(&job.project.top, &target, tip) {
                Ok(standing) => Some(standing),
                // No such project branch (deleted, or a typo in the record): nothing has landed.
                Err(_) if !ref_exists(job.project, &target) => None,
                Err(e) => return Branch::Unknown(e.to_string()),
            }
        }
        _ => None,
    };
    Branch::Commits { count, standing }
}

fn ref_exists(project: &Project, reference: &str) -> bool {
    git::try_run(
        &project.top,
        [
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            reference,
        ],
    )
    .is_ok_and(|out| out.status.success())
}
