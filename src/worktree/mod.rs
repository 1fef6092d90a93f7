//! A job's worktree: a shared clone of the project on branch `isolate/<id>` (create/, with the
//! `.worktreeinclude` copy of include.rs), the import of its commits into the project (import.rs),
//! reads of its repository that execute nothing planted there (inspect/, trusting stat
//! data only of files unchanged since the checkout noted in checked_out.rs), the one cleanup
//! predicate every ending goes through (cleanup/), what its commits need outside git's object
//! store (LFS and git-annex objects, large_files/), the ignore rules a job's policy adds
//! (policy_ignores.rs), where a job's branch stands against the
//! project branch (standing.rs), the project's checkouts that hold a branch (checkouts.rs) (the
//! removal of a worktree by descriptor is sys/remove/), the marks `worktrees` shows (marks/), a job's
//! branch merged into its project branch (merge/), and git run sandboxed in a job's repository
//! (sandboxed.rs). The project itself and the runner for git in it are src/git/, below this layer.

pub mod checked_out;
pub mod checkouts;
pub mod cleanup;
pub mod create;
pub mod import;
pub mod include;
pub mod inspect;
pub mod large_files;
pub mod marks;
pub mod merge;
pub mod policy_ignores;

pub mod sandboxed;
pub mod standing;
