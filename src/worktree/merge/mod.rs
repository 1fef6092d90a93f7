//! One job's branch into its project branch (docs/worktrees.md, "Handoff, merge and sync"). First
//! the job's commits are imported (when its worktree is there) and the job's own change is shown:
//! its commits beyond the project branch, the files of `merge-base...tip`, and how far the project
//! branch moved since the job's base. Then the merge is computed in the project from objects alone
//! (`git merge-tree --write-tree`, then `commit-tree` with the project branch as first parent and
//! the job's tip as second), so nothing planted in the job's repository runs and no worktree is
//! needed; the commit is checked to be the merge of exactly what was shown, and the project branch
//! is fast-forwarded to it only if it is still at the commit that was shown and the project's
//! checkout has no uncommitted changes to the files involved; then verified. A merge that conflicts
//! is made in the job's worktree instead (recreated from its branch when it was removed),
//! sandboxed under the job's policy with its hooks off, and left there: the project is never
//! half-merged.
//!
//! What a merge shows and how it ends are plan.rs; the look before it preview.rs; the merge made in
//! the project land.rs, the project's checkout fast-forwarded by fast_forward.rs (looked at beneath
//! its own directory, never through a link, by beneath.rs; refused over files the user's programs
//! read as configuration, configuration.rs); a conflict made
//! in the job's worktree conflict.rs (the worktree made again for it by recreate.rs); the reads of
//! the project it takes read.rs; the files the user's filter drivers run drivers.rs.

mod beneath;
mod configuration;
mod conflict;
mod drivers;
mod fast_forward;
mod land;
mod plan;
mod preview;
mod read;
mod recreate;

pub use drivers::driver_files;
pub use land::land;
pub use plan::{Change, Kind, Landing, Plan, Preview};
pub use preview::{preview, require_git};
