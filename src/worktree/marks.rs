//! The marks of a managed worktree (`isolate worktrees`): running, lost, forgotten, missing,
//! dirty, other refs, an operation in progress, ahead, behind, no commits, merged (also after a
//! squash or rebase merge, standing.rs), to import, and when it was last used; and what `prune`
//! would do with it. Marks and that prediction are read off the cleanup decision's own facts and
//! verdict (`cleanup::survey`), so `worktrees`, `prune --dry-run` and `prune` cannot disagree.

use std::fmt;
use std::path::Path;
use std::time::SystemTime;

use serde::{Serialize, Serializer};

use crate::job::record::Record;
use crate::worktree::cleanup::{
    self, Action, Branch, Facts, Life, Recorded, Settling, Tree, Verdict,
};

/// One mark of a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    Running,
    Lost,
    /// `rm --force` forgot the job and left its worktree on disk.
    Forgotten,
    /// Modified, untracked and conflicted files and stash entries.
    Dirty(usize),
    /// Other branches or tags (or a detached HEAD) with commits the project does not have.
    OtherRefs(usize),
    InProgress(&'static str),
    /// The job has commits the project has not imported yet.
    ToImport,
    /// The project has no branch for the job.
    NoBranch,
    NoCommits,
    Merged,
    Ahead(usize),
    Behind(usize),
    Missing,
    Clean,
}

impl fmt::Display for Mark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mark::Running => f.write_str("running"),
            Mark::Lost => f.write_str("lost"),
            Mark::Forgotten => f.write_str("forgotten"),
            Mark::Dirty(n) => write!(f, "dirty ({n})"),
            Mark::OtherRefs(n) => write!(f, "other refs ({n})"),
            Mark::InProgress(op) => write!(f, "{op} in progress"),
            Mark::ToImport => f.write_str("to import"),
            Mark::NoBranch => f.write_str("no branch"),
            Mark::NoCommits => f.write_str("no commits"),
            Mark::Merged => f.write_str("merged"),
            Mark::Ahead(n) => write!(f, "ahead {n}"),
            Mark::Behind(n) => write!(f, "behind {n}"),
            Mark::Missing => f.write_str("missing"),
            Mark::Clean => f.write_str("clean"),
        }
    }
}

impl Serialize for Mark {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One managed worktree, its marks, and what `prune` would do with it.
#[derive(Debug, Serialize)]
pub struct Row {
    pub id: String,
    pub path: String,
    pub branch: String,
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
    /// What `prune` would do: `would remove` or `kept`, and why.
    pub prune: String,
    pub reason: String,
    #[serde(skip)]
    pub facts: Option<Facts>,
    #[serde(skip)]
    pub verdict: Option<Verdict>,
}

/// The row of `record`'s worktree, when it has one that isolate did not remove.
pub fn row(state: &Path, record: &Record) -> Option<Row> {
    let wt = record.worktree.as_ref().filter(|wt| !wt.removed)?;
    let mut row = Row {
        id: record.id.clone(),
        path: wt.path.clone(),
        branch: wt.branch.clone(),
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
        prune: "kept".into(),
        reason: String::new(),
        facts: None,
        verdict: None,
    };
    let recorded = match Recorded::open(state, record) {
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
        Action::Remove => "would remove".into(),
        Action::Keep => "kept".into(),
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

fn fill(row: &mut Row, facts: &Facts) {
    row.running = facts.life == Life::Running;
    row.lost = facts.life == Life::Lost;
    row.missing = matches!(facts.tree, Tree::Missing);
    let marks = &mut row.marks;
    match facts.life {
        Life::Running => marks.push(Mark::Running),
        Life::Lost => marks.push(Mark::Lost),
        Life::Ended => {}
    }
    if row.forgotten {
        marks.push(Mark::Forgotten);
    }
    match &facts.tree {
        Tree::Present(Ok(insp)) => {
            row.dirty = insp.modified + insp.untracked + insp.conflicted + insp.stash_entries;
            if row.dirty > 0 {
                marks.push(Mark::Dirty(row.dirty));
            }
            if !facts.unimported.is_empty() {
                marks.push(Mark::OtherRefs(facts.unimported.len()));
            }
            marks.extend(insp.in_progress.iter().map(|op| Mark::InProgress(op)));
        }
        Tree::Present(Err(e)) => row.error = Some(e.clone()),
        Tree::Missing | Tree::Removed => {}
    }
    match &facts.branch {
        Branch::Unknown(e) => {
            row.error.get_or_insert_with(|| e.clone());
        }
        Branch::ToImport => marks.push(Mark::ToImport),
        Branch::Gone => marks.push(Mark::NoBranch),
        Branch::AtBase => marks.push(Mark::NoCommits),
        Branch::Commits { count, standing } => match standing {
            Some(standing) => {
                row.unmerged = standing.unmerged;
                marks.push(if standing.landed() {
                    Mark::Merged
                } else {
                    Mark::Ahead(standing.unmerged)
                });
                if standing.behind > 0 {
                    marks.push(Mark::Behind(standing.behind));
                }
            }
            None => {
                row.unmerged = *count;
                marks.push(Mark::Ahead(*count));
            }
        },
    }
    if row.missing {
        marks.push(Mark::Missing);
    }
    if marks.is_empty() && row.error.is_none() {
        marks.push(Mark::Clean);
    }
}

fn used(path: &Path) -> Option<SystemTime> {
    let index = std::fs::metadata(path.join(".git/index")).and_then(|m| m.modified());
    index
        .or_else(|_| std::fs::metadata(path).and_then(|m| m.modified()))
        .ok()
}

/// "2d ago", "3h ago", "5m ago", "just now".
pub fn ago(rfc3339: &str) -> String {
    let Ok(then) = humantime::parse_rfc3339(rfc3339) else {
        return String::new();
    };
    let secs = SystemTime::now()
        .duration_since(then)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    match secs {
        0..=59 => "just now".into(),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86400),
    }
}
