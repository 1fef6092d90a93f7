//! The inspection of a job repository: what it holds, and the read of its refs (HEAD, the job's
//! branch, every other ref: branches, tags, notes, replace refs, any the job named; the stash).
//! Also the job's branch alone (`branch_tip`), read where the whole inspection failed, so that the
//! commits come home whatever the work tree holds. Never resolves a ref through `refs/replace/`.

use std::path::Path;

use gix::bstr::ByteSlice;

use super::bounds::{check_head, readable, MAX_PATHS};
use super::error::InspectError;
use super::forged::CheckedOut;
use super::layout::check_layout;
use super::linked::linked_refs;
use super::linked_status::add_linked_status;
use super::nested::nested_work;
use super::open::open_untrusted;
use super::patterns::{check_excludes, ProjectExcludes, Refusal};
use super::state::{count_lines, in_progress};
use super::status::count_status;
use super::unwalked::in_git_dir;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inspection {
    /// Branch HEAD points at (e.g. "isolate/fix-3fa2"), None when detached or unborn.
    /// A symbolic HEAD to a ref outside `refs/heads/` is given by its full name.
    pub head_branch: Option<String>,
    /// Commit HEAD resolves to (40-hex), None when unborn.
    pub head_commit: Option<String>,
    /// Tip of `refs/heads/<branch>` for the `branch` argument, None if that ref is missing.
    pub branch_tip: Option<String>,
    /// Tracked files that differ: staged (index vs HEAD tree) or modified/deleted in the work tree
    /// (vs index), including intent-to-add entries. A file both staged and modified counts once;
    /// conflicted paths are not counted here.
    pub modified: usize,
    /// Untracked files that are not ignored. Each file counts, also inside a wholly untracked
    /// directory; a nested repository counts as 1. Empty directories do not count.
    pub untracked: usize,
    /// Index entries with unresolved conflicts (count paths once).
    pub conflicted: usize,
    /// Ignored entries, a fully ignored directory counting as 1; informational only.
    pub ignored: usize,
    /// Operations in progress, named "merge", "rebase", "cherry-pick", "revert", "bisect" (from
    /// MERGE_HEAD, rebase-merge/, rebase-apply/, CHERRY_PICK_HEAD, REVERT_HEAD, BISECT_LOG in the git dir).
    pub in_progress: Vec<&'static str>,
    /// Number of stash entries (reflog lines of refs/stash; 1 if the ref exists without a reflog).
    pub stash_entries: usize,
    /// Every other ref (full ref name, peeled object id as 40-hex, normally a commit), excluding
    /// refs/heads/<branch> and refs/stash; with the detached HEAD and the per-worktree refs of each
    /// linked worktree the job added (`worktrees/<name>/HEAD`, unpeeled). Sorted by name. A ref whose object is
    /// missing keeps its unpeeled id; a dangling symbolic ref is left out.
    pub other_refs: Vec<(String, String)>,
    /// Repositories inside the worktree that the index names as gitlinks and that hold work (their
    /// status, or commits no remote of theirs has), each a line saying what.
    pub nested: Vec<String>,
    /// The jobs started inside this job (job/nest.rs), by id; a worktree of theirs still there is
    /// a line of `nested`. Not read here: the job's record directory holds them (the cleanup
    /// adds them).
    pub nested_jobs: Vec<String>,
}

/// Inspect the repository whose work tree is `worktree` (git dir `worktree/.git`). `branch` is the
/// short branch name isolate created ("isolate/<id>"); `checked_out`, when isolate's checkout of
/// the worktree ended: the stat data of a file changed since is not trusted (forged.rs).
pub fn inspect(
    worktree: &Path,
    branch: &str,
    trusted: &ProjectExcludes,
    checked_out: CheckedOut,
) -> Result<Inspection, InspectError> {
    let git_dir = worktree.join(".git");
    check_layout(&git_dir)?;
    check_excludes(&git_dir, trusted).map_err(|reason| InspectError::Untrusted {
        path: worktree.to_owned(),
        reason,
    })?;
    let repo = open_untrusted(worktree, &git_dir)?;
    let git = |what: &'static str| {
        let path = worktree.to_owned();
        move |source: gix::Error| InspectError::Git { path, what, source }
    };

    // Before anything of HEAD is read: what it leads through to its tree is small enough to read
    // (the tree itself is checked by the status, if it reads it).
    check_head(&repo).map_err(|reason| InspectError::NotARepository {
        path: worktree.to_owned(),
        reason,
    })?;

    let mut out = Inspection::default();

    let head = repo.head().map_err(git("cannot read HEAD"))?;
    if let gix::head::Kind::Symbolic(referent) = &head.kind {
        let name = referent.name.as_bstr();
        let short = name.strip_prefix(b"refs/heads/").unwrap_or(name);
        out.head_branch = Some(short.to_str_lossy().into_owned());
    }
    let unpeeled = head.id().map(|id| id.detach());
    out.head_commit = match head.try_into_peeled_id() {
        Ok(id) => id.map(|id| id.detach()),
        // The object is missing or unreadable: still report where HEAD points.
        Err(_) => unpeeled,
    }
    .map(|id| id.to_string());

    let branch_ref = format!("refs/heads/{branch}");
    out.branch_tip = match repo
        .try_find_reference(branch_ref.as_str())
        .map_err(git("cannot read the job branch"))?
    {
        Some(mut reference) => target_hex(&mut reference),
        None => None,
    };

    // Every ref, not only branches and tags: work reachable only from `refs/notes/*`,
    // `refs/replace/*` or a ref of the job's own naming is work too. The stash is counted apart.
    let platform = repo.references().map_err(git("cannot list references"))?;
    for reference in platform.all().map_err(git("cannot list references"))? {
        let mut reference = reference.map_err(|source| InspectError::Git {
            path: worktree.to_owned(),
            what: "cannot read a reference",
            source: gix::Error::from_error(source),
        })?;
        let name = reference.name().as_bstr().to_str_lossy().into_owned();
        if name == branch_ref || name == "refs/stash" {
            continue;
        }
        if let Some(id) = target_hex(&mut reference) {
            out.other_refs.push((name, id));
        }
    }
    // The job's own linked worktrees: a detached HEAD or a per-worktree ref there is a ref too.
    out.other_refs.extend(linked_refs(&git_dir)?);
    out.other_refs.sort();
    out.other_refs.dedup();

    out.stash_entries = match repo
        .try_find_reference("refs/stash")
        .map_err(git("cannot read refs/stash"))?
    {
        Some(_) => count_lines(&git_dir.join("logs/refs/stash"))?.max(1),
        None => 0,
    };

    out.in_progress = in_progress(&git_dir);

    let mut paths = MAX_PATHS;
    let mut ignored = count_status(&repo, &mut out, &mut paths, checked_out).map_err(|source| {
        match source.downcast_any_ref::<Refusal>() {
            Some(Refusal::Untrusted(reason)) => InspectError::Untrusted {
                path: worktree.to_owned(),
                reason: reason.clone(),
            },
            _ => git("cannot compute the status")(source),
        }
    })?;
    // Linked worktrees the job added inside its worktree go with it: their status counts too.
    ignored.extend(add_linked_status(
        worktree,
        &git_dir,
        &mut out,
        checked_out,
    )?);
    // So do the repositories it holds as gitlinks, those it holds ignored, and those it made in
    // its git directory.
    let hidden = in_git_dir(worktree, &git_dir).map_err(|reason| InspectError::NotARepository {
        path: worktree.to_owned(),
        reason,
    })?;
    out.nested = nested_work(worktree, &repo, (ignored, hidden), checked_out)?;
    Ok(out)
}

/// The tip of `refs/heads/<branch>` in the repository whose work tree is `worktree`, read alone:
/// the same layout checks and the same safe open as `inspect`, and nothing of the work tree, its
/// index or its ignore rules. `None` when the job deleted its branch.
pub fn branch_tip(worktree: &Path, branch: &str) -> Result<Option<String>, InspectError> {
    let git_dir = worktree.join(".git");
    check_layout(&git_dir)?;
    let repo = open_untrusted(worktree, &git_dir)?;
    let reference = repo
        .try_find_reference(format!("refs/heads/{branch}").as_str())
        .map_err(|source: gix::Error| InspectError::Git {
            path: worktree.to_owned(),
            what: "cannot read the job branch",
            source,
        })?;
    Ok(reference.and_then(|mut reference| target_hex(&mut reference)))
}

/// The peeled id `reference` points at as hex; its direct target if the object can't be read;
/// None for a dangling symbolic ref.
fn target_hex(reference: &mut gix::Reference<'_>) -> Option<String> {
    let direct = reference.target().try_id().map(|id| id.to_owned());
    // A tag too big to read is not peeled: its own id stands for it (the project lacks it).
    if let Some(id) = direct.filter(|&id| !readable(reference.repo, id)) {
        return Some(id.to_string());
    }
    match reference.peel_to_id() {
        Ok(id) => Some(id.detach().to_string()),
        Err(_) => direct.map(|id| id.to_string()),
    }
}
