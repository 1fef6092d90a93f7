//! The marks of a managed worktree (`isolate worktrees`, `prune`): running, lost, missing, dirty,
//! ahead, behind, no commits, merged (also after a squash or rebase merge: patch-equivalent
//! commits, as `git cherry` sees them), and when it was last used. The job's repository is read
//! in-process (inspect.rs); git runs only in the project.

use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;

use crate::error::Result;
use crate::git;
use crate::job::record::{Record, State};
use crate::worktree::cleanup::Recorded;
use crate::worktree::inspect;

/// One managed worktree and its marks.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub path: String,
    pub branch: String,
    pub project_branch: Option<String>,
    pub marks: Vec<String>,
    /// Commits on the job's branch that the project branch lacks (by patch, not by id).
    pub unmerged: usize,
    pub dirty: usize,
    pub running: bool,
    pub lost: bool,
    pub missing: bool,
    /// When the worktree was last written (its index, or the directory).
    pub used: Option<String>,
    /// Why the marks could not all be computed, if so.
    pub error: Option<String>,
}

/// The marks of `record`'s worktree.
pub fn row(state: &Path, record: &Record) -> Option<Row> {
    let wt = record.worktree.as_ref().filter(|wt| !wt.removed)?;
    let effective = record.effective_state();
    let mut row = Row {
        id: record.id.clone(),
        path: wt.path.clone(),
        branch: wt.branch.clone(),
        project_branch: wt.project_branch.clone(),
        marks: Vec::new(),
        unmerged: 0,
        dirty: 0,
        running: effective == State::Running,
        lost: effective == State::Lost,
        missing: !Path::new(&wt.path).exists(),
        used: None,
        error: None,
    };
    if let Err(e) = fill(state, record, &mut row) {
        row.error = Some(e.to_string());
    }
    if row.running {
        row.marks.insert(0, "running".into());
    }
    if row.lost {
        row.marks.insert(0, "lost".into());
    }
    if row.missing {
        row.marks.push("missing".into());
    }
    if row.marks.is_empty() && row.error.is_none() {
        row.marks.push("clean".into());
    }
    Some(row)
}

fn fill(state: &Path, record: &Record, row: &mut Row) -> Result<()> {
    let recorded = Recorded::open(state, record)?;
    let path = Path::new(&recorded.worktree.path);
    if !row.missing {
        let insp = inspect::inspect(path, &row.branch)
            .map_err(|e| crate::error::Error::Other(e.to_string()))?;
        row.dirty = insp.modified + insp.untracked + insp.conflicted + insp.stash_entries;
        if row.dirty > 0 {
            row.marks.push(format!("dirty ({})", row.dirty));
        }
        row.used = used(path).map(|t| humantime::format_rfc3339_seconds(t).to_string());
    }
    let top = &recorded.project.top;
    let branch = format!("refs/heads/{}", row.branch);
    let tip = git::try_run(
        top,
        [
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &branch,
        ],
    )?;
    if !tip.status.success() {
        row.marks.push("no branch".into());
        return Ok(());
    }
    if tip.text() == recorded.worktree.base {
        row.marks.push("no commits".into());
        return Ok(());
    }
    let Some(target) = &row.project_branch else {
        return Ok(());
    };
    let range = format!("refs/heads/{target}...{branch}");
    let counts = git::run(
        top,
        [
            "rev-list",
            "--left-right",
            "--count",
            "--end-of-options",
            &range,
        ],
    )?
    .text();
    let mut parts = counts
        .split_whitespace()
        .map(|n| n.parse::<usize>().unwrap_or(0));
    let (behind, ahead) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if ahead > 0 {
        // Commits whose patch the project branch does not have ("+" in git cherry).
        let cherry = git::run(top, ["cherry", &format!("refs/heads/{target}"), &branch])?.text();
        row.unmerged = cherry.lines().filter(|l| l.starts_with('+')).count();
        if row.unmerged > 0 && merges_to_nothing(top, target, &branch)? {
            // A squash merge: no single commit matches, but merging would change nothing.
            row.unmerged = 0;
        }
    }
    if row.unmerged == 0 {
        row.marks.push("merged".into());
    } else {
        row.marks.push(format!("ahead {}", row.unmerged));
    }
    if behind > 0 {
        row.marks.push(format!("behind {behind}"));
    }
    Ok(())
}

/// Whether merging `branch` into `target` would leave `target`'s tree as it is (git merge-tree,
/// which writes only tree objects and touches no ref, index or checkout).
fn merges_to_nothing(top: &Path, target: &str, branch: &str) -> Result<bool> {
    let ours = format!("refs/heads/{target}");
    let merged = git::try_run(
        top,
        ["merge-tree", "--write-tree", "--no-messages", &ours, branch],
    )?;
    if !merged.status.success() {
        return Ok(false);
    }
    let tree = git::run(
        top,
        [
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{ours}^{{tree}}"),
        ],
    )?
    .text();
    Ok(merged.text().lines().next() == Some(tree.as_str()))
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
