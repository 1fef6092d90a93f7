//! The state files of a job's git directory read directly: the operations in progress and the stash
//! reflog. Never reads a file that is not a regular one, never more than a bound.

use std::io::Read;
use std::path::Path;

use gix::bstr::ByteSlice;

use super::error::InspectError;

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
/// is read, and at most 64 MiB of it (about 400,000 entries), so a planted FIFO or device can't
/// block or exhaust the inspection.
pub(super) fn count_lines(path: &Path) -> Result<usize, InspectError> {
    const LIMIT: u64 = 64 << 20;
    let io = |what: &'static str| {
        let path = path.to_owned();
        move |source: std::io::Error| InspectError::Io { path, what, source }
    };
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => {}
        Ok(_) => return Ok(0),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(err) => return Err(io("cannot stat the stash reflog")(err)),
    }
    let mut content = Vec::new();
    std::fs::File::open(path)
        .map_err(io("cannot open the stash reflog"))?
        .take(LIMIT)
        .read_to_end(&mut content)
        .map_err(io("cannot read the stash reflog"))?;
    Ok(content
        .lines()
        .filter(|line| !line.trim().is_empty())
        .count())
}
