//! Whether a nested repository's commits are published: reached from its own remote-tracking
//! refs (which the job can write too: SECURITY.md, the ninth look's "Still open").

use std::collections::HashSet;
use std::path::Path;

use gix::ObjectId;

use super::error::InspectError;
use super::reflog::reflog_ids;

/// The most commits walked from a nested repository's remote refs.
const MAX_WALK: usize = 200_000;

/// Whether HEAD, every ref of `repo` but its remote-tracking ones (branches, tags, the stash,
/// notes, anything else) and every commit its reflogs name (a `reset --hard` leaves one there
/// only) are reached from its remote-tracking refs.
pub(super) fn published(
    repo: &gix::Repository,
    (top, git_dir): (&Path, &Path),
) -> Result<bool, InspectError> {
    let git = |source: gix::Error| InspectError::Git {
        path: top.to_owned(),
        what: "cannot read a nested repository's refs",
        source,
    };
    let mut remote = Vec::new();
    let mut local = Vec::new();
    let platform = repo.references().map_err(git)?;
    for reference in platform.all().map_err(|e| git(gix::Error::from_error(e)))? {
        let Ok(mut reference) = reference else {
            return Ok(false);
        };
        let name = reference.name().as_bstr().to_owned();
        // A ref that cannot be peeled holds what cannot be told: as if not published.
        let Ok(id) = reference.peel_to_id() else {
            return Ok(false);
        };
        if name.starts_with(b"refs/remotes/") {
            remote.push(id.detach());
        } else {
            local.push(id.detach());
        }
    }
    if let Ok(head) = repo.head_id() {
        local.push(head.detach());
    }
    local.extend(reflog_ids(git_dir)?);
    if local.is_empty() {
        return Ok(true);
    }
    let reached = reachable(repo, &remote);
    Ok(local.iter().all(|id| reached.contains(id)))
}

/// The commits reached from `tips`, at most `MAX_WALK` of them.
fn reachable(repo: &gix::Repository, tips: &[ObjectId]) -> HashSet<ObjectId> {
    let mut seen = HashSet::new();
    let mut pending: Vec<ObjectId> = tips.to_vec();
    while let Some(id) = pending.pop() {
        if seen.len() >= MAX_WALK || !seen.insert(id) {
            continue;
        }
        let small = repo
            .find_header(id)
            .is_ok_and(|h| h.kind() == gix::objs::Kind::Commit && h.size() < 1 << 20);
        if let Some(commit) = small.then(|| repo.find_commit(id).ok()).flatten() {
            pending.extend(commit.parent_ids().map(|p| p.detach()));
        }
    }
    seen
}
