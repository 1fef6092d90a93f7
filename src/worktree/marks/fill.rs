//! The marks of a row read off the cleanup decision's own facts. Never looks at the disk itself.

use super::mark::Mark;
use super::row::Row;
use crate::worktree::cleanup::{Branch, Facts, Life, Tree};

pub(super) fn fill(row: &mut Row, facts: &Facts) {
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
            if !facts.outside.lacking.is_empty() {
                marks.push(Mark::OutsideGit(facts.outside.lacking.len()));
            }
        }
        Tree::Present(Err(e)) => row.error = Some(e.to_string()),
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
