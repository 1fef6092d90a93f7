//! Creating a job's worktree (docs/worktrees.md, "Creation"): a fresh repository that borrows the
//! project's objects read-only, on branch `isolate/<id>` at base, checked out with parallel
//! checkout, configured to commit as the project does; the branch and a base pin in the project.
//! Everything made here is recorded in `Created`, whose `undo` removes exactly that and nothing else.
//! The refs it makes in the project are refs.rs, the repository it fills init.rs and checkout.rs,
//! the worktree made again after isolate removed it recreate.rs.

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::id::JobId;
use crate::sandbox::policy;
use crate::worktree::checked_out;
use crate::worktree::include::{self, Included};
use crate::worktree::inspect::CheckedOut;

mod checkout;
mod filters;
mod init;
mod recreate;
mod refs;

use checkout::{checkout, Base};
use init::init;
use refs::project_refs;

pub use filters::Filtered;
pub use recreate::recreate;
pub use refs::{pin_ref, undo};

/// How a new worktree is filled.
#[derive(Clone, Copy)]
pub struct Fill<'a> {
    /// The configured `.worktreeinclude` patterns, used when the project has no such file.
    pub include: &'a [String],
    /// The job's policy, under which the filter drivers of a base only jobs vouch for run (`None`
    /// with `--no-sandbox`).
    pub confined: Option<&'a policy::Loaded>,
    /// git's progress line on isolate's stderr (a terminal).
    pub progress: bool,
    /// What the job's policy has its worktree ignore beyond the project's rules.
    pub ignore: &'a [policy::IgnoreRule],
}

/// A worktree isolate has made, and the refs it made in the project.
#[derive(Debug)]
pub struct Created {
    pub path: PathBuf,
    pub branch: String,
    pub base: String,
    /// The project's checkout had uncommitted changes (they are not in the worktree).
    pub dispatch_dirty: bool,
    /// Files `.worktreeinclude` brought in, and those a link in the worktree kept out.
    pub included: Included,
    /// The project's branch the job was started from (`merge` and `sync` bring it in).
    pub project_branch: Option<String>,
    /// The pull request the base is the head of (`--pr`), and where a fetched base came from.
    pub pull_request: Option<u64>,
    pub started_from: Option<String>,
    /// The files of a base only jobs vouch for that a filter driver writes, and how they were
    /// written.
    pub filtered: Filtered,
    /// When the checkout ended (for the record directory: checked_out.rs).
    pub checked_out: CheckedOut,
    /// The project vouches for the base (a ref of its own but a job's reaches it): what the
    /// worktree holds is what the user has in the project.
    pub vouched: bool,
}

/// Creates the worktree of job `id` at `path` from commit `base`. `Ok(None)` when the id is taken
/// (its branch, pin or directory exists already): nothing was made, draw another.
/// `include`: the configured `.worktreeinclude` patterns, used when the project has no such file.
/// `confined`: the job's policy, under which the filter drivers of a base only jobs vouch for run
/// (`None` with `--no-sandbox`). `progress`: git's progress line on isolate's stderr (a terminal).
pub fn create(
    project: &Project,
    id: &JobId,
    path: &Path,
    base: &str,
    fill_with: Fill<'_>,
) -> Result<Option<Created>> {
    let branch = id.branch();
    // Whether the caller's checkout is dirty is only reported, so it runs beside everything else
    // from the start (it reads the project, writes nothing: optional locks are off).
    let status_dir = project.caller_top.clone();
    let dirty = thread::spawn(move || {
        git::try_run(
            &status_dir,
            [
                "status",
                "--porcelain",
                "--untracked-files=normal",
                "--ignore-submodules",
            ],
        )
        .map(|out| out.status.success() && !out.stdout.is_empty())
        .unwrap_or(false)
    });
    // The directory first: its creation is the atomic test that nobody else has this id under the
    // worktree root, and nothing is made in the project when it is taken.
    if let Err(e) = fs::create_dir(path) {
        let _ = dirty.join();
        return match e.kind() {
            std::io::ErrorKind::AlreadyExists => Ok(None),
            _ => Err(Error::io("cannot create the worktree", path, e)),
        };
    }
    // The refs (the atomic test that nobody else has this id in the project) beside `git init` in
    // the fresh directory and whether the project vouches for base (its refs but the jobs' own),
    // neither of which needs them; the checkout waits for all three.
    let (refs, made) = thread::scope(|scope| {
        let refs = scope.spawn(|| project_refs(project, id, base));
        let made = init(project, id, path, fill_with.ignore).and_then(|()| {
            Ok(match filters::vouched(project, base)? {
                true => Base::Vouched,
                false => Base::JobsOnly,
            })
        });
        let refs = refs
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (refs, made)
    });
    match refs {
        Ok(true) => {}
        // Taken in the project (or unreadable): the refs are someone else's, never deleted; the
        // directory is the one made above, holding only what `init` wrote.
        taken_or_failed => {
            let _ = fs::remove_dir_all(path);
            let _ = dirty.join();
            return taken_or_failed.map(|_| None);
        }
    }
    let whose = match made {
        Ok(whose) => whose,
        Err(e) => {
            let _ = dirty.join();
            undo(project, id, path, base);
            return Err(e);
        }
    };
    let filled = fill(project, id, path, (base, whose), fill_with);
    let dispatch_dirty = dirty.join().unwrap_or(false);
    match filled {
        Ok((included, filtered, checked_out)) => Ok(Some(Created {
            path: path.to_path_buf(),
            branch,
            base: base.to_string(),
            dispatch_dirty,
            included,
            project_branch: None,
            pull_request: None,
            started_from: None,
            filtered,
            checked_out,
            vouched: matches!(whose, Base::Vouched),
        })),
        Err(e) => {
            undo(project, id, path, base);
            Err(e)
        }
    }
}

/// The new repository (made by `init`) checked out at `base`, whose history `whose` is (with no
/// attributes when only jobs vouch for it, the files filters write then written confined), and
/// `.worktreeinclude`'s files copied in; and when the checkout ended.
fn fill(
    project: &Project,
    id: &JobId,
    path: &Path,
    (base, whose): (&str, Base),
    with: Fill<'_>,
) -> Result<(Included, Filtered, CheckedOut)> {
    let format = project.object_format.as_str();
    checkout(path, &id.branch(), base, whose, (format, with.progress))?;
    // Before anything but isolate's own checkout wrote a file there.
    let checked_out = checked_out::now();
    let filtered = match whose {
        Base::Vouched => Filtered::Nothing,
        Base::JobsOnly => {
            let withheld = filters::withhold(path)?;
            filters::write_withheld(project, path, &withheld, with.confined)?
        }
    };
    let included = include::copy(project, path, with.include)?;
    Ok((included, filtered, checked_out))
}

#[cfg(test)]
mod tests;
