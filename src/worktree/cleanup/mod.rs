//! THE cleanup decision of docs/worktrees.md ("When a job ends"): one predicate, `decide`, used by
//! every path that ends a job, and `settle`, which gathers the facts for it, imports first, and
//! deletes only what the decision allows, after checking the record against the disk and
//! re-checking the decision immediately before deleting. A probe that cannot decide keeps.
//!
//! The facts it decides on are facts.rs (the work a tree holds, work.rs), why a worktree stays
//! keep.rs, the predicate decide.rs, its reading as `prune`, `rm` and `worktrees` print it
//! outcome.rs, the branch's fate fate.rs. The look that gathers the facts is gather.rs (the refs
//! it reads refs.rs, the branch it counts counted.rs, the bounded read of the job's repository
//! bounded.rs); the carrying out settle.rs (what it left, ending.rs, read into the job's record by
//! report.rs), under the import lock of import_lock.rs, with the record checked against the disk
//! by validate.rs. A job as the record names it is job.rs and recorded.rs; the look that changes
//! nothing survey.rs; where isolate last left the branch branch_tip.rs.

mod bounded;
mod branch_tip;
mod counted;
mod decide;
mod ending;
mod facts;
mod fate;
mod gather;
mod import_lock;
mod job;
mod keep;
mod nested_jobs;
mod outcome;
mod recorded;
mod refs;
mod report;
mod settle;
mod survey;
mod validate;
mod work;

pub use bounded::inspect_bounded;
pub use branch_tip::note_import;
pub use decide::{decide, Verdict};
pub use ending::{Ending, Gone, Stay};
pub use facts::{Branch, Facts, Life, Settling, Tree};
pub use fate::{branch_fate, BranchKept, Deleted, Fate};
pub use import_lock::import_now;
pub use job::Job;
pub use keep::{Keep, Unmerged};
pub use outcome::{outcome, Action, BranchAction, Outcome};
pub use recorded::{Projects, Recorded};
pub use settle::{settle, Settled};
pub use survey::survey;
pub use validate::{validate, Mismatch};
pub use work::Work;

#[cfg(test)]
mod tests;
