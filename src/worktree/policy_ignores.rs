//! The ignore rules a job's policy adds to its worktree (`[worktree] ignore`: aider's `.aider*`,
//! the files an agent keeps where it works): written into the job's `.git/info/exclude` beside the
//! project's own when the worktree is made (create/init.rs), and noted in the job's record
//! directory, which the job cannot write, so that the cleanup trusts them as it trusts the
//! project's (inspect/patterns.rs). What the job's own file says is never what makes a rule
//! trusted.

use std::path::Path;

use crate::sandbox::policy::IgnoreRule;
use crate::sys::atomic;

/// In the job directory: the policy's rules, one a line.
const NOTE: &str = "worktree-ignore";
/// The most of the note read back (a policy's rules are a few lines).
const MAX: u64 = 1 << 20;

/// Notes `rules` in `job_dir` (nothing when there are none). A note that cannot be written is no
/// note: the files the rules match then keep the worktree, as rules the job wrote would.
pub fn note(job_dir: &Path, rules: &[IgnoreRule]) {
    if !rules.is_empty() {
        let _ = atomic::write(&job_dir.join(NOTE), lines(rules).as_bytes());
    }
}

/// The rules noted in `job_dir`: none when there is no note (or it cannot be read, which then
/// keeps a worktree whose exclude file holds them).
pub fn noted(job_dir: &Path) -> Vec<Vec<u8>> {
    crate::textfile::read_at_most(&job_dir.join(NOTE), MAX)
        .map(|text| text.lines().map(|l| l.as_bytes().to_vec()).collect())
        .unwrap_or_default()
}

/// `rules` as the lines of an exclude file.
pub(crate) fn lines(rules: &[IgnoreRule]) -> String {
    rules.iter().map(|r| format!("{}\n", r.as_str())).collect()
}
