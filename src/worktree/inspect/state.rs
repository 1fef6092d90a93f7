//! The state files of a job's git directory read directly: the operations in progress and the stash
//! reflog. Never reads a file that is not a regular one, never more than a bound.

use std::path::Path;

use gix::bstr::ByteSlice;

use super::error::InspectError;
use super::linked::read_small;

pub(super) fn in_progress(git_dir: &Path) -> Vec<&'static str> {
    let exists = |name: &str| std::fs::symlink_metadata(git_dir.join(name)).is_ok();
    let mut ops = Vec::new();
    if exists("MERGE_HEAD") {
        ops.push("merge");
    }
    if exists("rebase-merge") || exists("rebase-apply") {
        ops.push("rebase");
    }
    if exists("CHERRY_PICK_HEAD") {
        ops.push("cherry-pick");
    }
    if exists("REVERT_HEAD") {
        ops.push("revert");
    }
    if exists("BISECT_LOG") {
        ops.push("bisect");
    }
    ops
}

/// Count the non-empty lines of the reflog at `path` (0 if it doesn't exist). Only a regular file
/// is read, opened without following a link or waiting for a FIFO's writer, and at most 64 MiB of
/// it (about 400,000 entries), so a planted FIFO or device can't block or exhaust the inspection.
pub(super) fn count_lines(path: &Path) -> Result<usize, InspectError> {
    const LIMIT: u64 = 64 << 20;
    let content = read_small(path, LIMIT)?.unwrap_or_default();
    Ok(content
        .lines()
        .filter(|line| !line.trim().is_empty())
        .count())
}
