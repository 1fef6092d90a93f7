//! One managed worktree's row: its marks and what `prune` would do with it, read off one survey.
//! Never imports, moves or deletes.

use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;

use super::fill::fill;
use super::mark::Mark;
use crate::job::record::Record;
use crate::worktree::cleanup::{self, Action, Facts, Projects, Recorded, Settling, Tree, Verdict};

/// One managed worktree, its marks, and what `prune` would do with it.
#[derive(Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub path: String,
    pub branch: String,
    /// The project the worktree borrows from (its top level).
    pub repo: String,
    pub project_branch: Option<String>,
    pub marks: Vec<Mark>,
    /// Commits on the job's branch that the project branch lacks (by patch, not by id).
    pub unmerged: usize,
    pub dirty: usize,
    pub running: bool,
    pub lost: bool,
    pub missing: bool,
    pub forgotten: bool,
    /// When the worktree was last written (its index, or the directory).
    pub used: Option<String>,
    /// Why the marks could not all be computed, if so.
    pub error: Option<String>,
    /// What `prune` would do (`would remove` or `kept` in the JSON), and why.
    pub prune: Prune,
    pub reason: String,
    #[serde(skip)]
    pub facts: Option<Facts>,
    #[serde(skip)]
    pub verdict: Option<Verdict>,
}

/// What `prune` would do with a worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Prune {
    #[serde(rename = "would remove")]
    WouldRemove,
    #[serde(rename = "kept")]
    Kept,
}

/// The row of `record`'s worktree, when it has one that isolate did not remove; its project from
/// `projects`, shared by the rows of one listing.
pub fn row(state: &Path, record: &Record, projects: &mut Projects) -> Option<Row> {
    let wt = record.worktree.as_ref().filter(|wt| !wt.removed)?;
    let mut row = Row {
        id: record.id.clone(),
        path: wt.path.clone(),
        branch: wt.branch.clone(),
        repo: wt.repo.clone(),
        project_branch: wt.project_branch.clone(),
        marks: Vec::new(),
        unmerged: 0,
        dirty: 0,
        running: false,
        lost: false,
        missing: false,
        forgotten: record.forgotten,
        used: None,
        error: None,
        prune: Prune::Kept,
        reason: String::new(),
        facts: None,
        verdict: None,
    };
    let recorded = match Recorded::open_among(state, record, projects) {
        Ok(recorded) => recorded,
        Err(e) => {
            row.error = Some(e.to_string());
            row.reason = format!("cannot decide: {e}");
            return Some(row);
        }
    };
    let job = recorded.job(Settling::Prune);
    let (facts, verdict) = cleanup::survey(&job);
    fill(&mut row, &facts);
    let outcome = cleanup::outcome(&job, &facts, &verdict);
    row.prune = match outcome.action {
        Action::Remove => Prune::WouldRemove,
        Action::Keep => Prune::Kept,
    };
    row.reason = outcome.reason;
    if matches!(facts.tree, Tree::Present(_)) {
        row.used =
            used(Path::new(&wt.path)).map(|t| humantime::format_rfc3339_seconds(t).to_string());
    }
    row.facts = Some(facts);
    row.verdict = Some(verdict);
    Some(row)
}

fn used(path: &Path) -> Option<SystemTime> {
    let index = std::fs::metadata(path.join(".git/index")).and_then(|m| m.modified());
    index
        .or_else(|_| std::fs::metadata(path).and_then(|m| m.modified()))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::Prune;

    #[test]
    fn what_prune_would_do_reads_as_it_did_when_it_was_a_string() {
        let json = |p: Prune| serde_json::to_string(&p).unwrap();
        assert_eq!(json(Prune::WouldRemove), "\"would remove\"");
        assert_eq!(json(Prune::Kept), "\"kept\"");
    }
}
