//! The decision as it stands, from a look that changes nothing: what `settle` would do now. Never
//! imports, moves or deletes.

use super::decide::{decide, Verdict};
use super::facts::Facts;
use super::gather::gather;
use super::job::{Job, Look};
use super::keep::Keep;
use super::validate::validate;

/// The decision as it stands, from a look that imports, moves and deletes nothing (`worktrees`,
/// `prune --dry-run`): what `settle` would do now.
pub fn survey(job: &Job) -> (Facts, Verdict) {
    let facts = gather(job, Look::Survey);
    let verdict = judge(job, &facts);
    (facts, verdict)
}

/// The predicate over the facts, and the record's claims checked against the disk.
pub(super) fn judge(job: &Job, facts: &Facts) -> Verdict {
    match validate(job, facts) {
        Ok(()) => decide(facts),
        Err(why) => Verdict::Keep(Keep::Mismatch(why)),
    }
}
