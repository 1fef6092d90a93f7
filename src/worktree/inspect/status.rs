//! The status of a job repository, counted: HEAD against the index, the index against the work
//! tree. Never writes the refreshed stat data back, never reads `.gitmodules`.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use gix::bstr::BString;
use gix::index::entry::Flags;

use super::bounds::{charge, check_tree};
use super::forged::{distrusted, CheckedOut};
use super::ignored::repositories_in;
use super::inspection::Inspection;
use super::patterns::{check_tracked, Refusal, BUDGET};
use super::refresh::{refreshed, Judge};
use super::settled::settled;
use super::tally::{NoSubmodules, Tally, Walked};
use super::unwalked::in_tracked_directories;
use super::written_tree::written_tree;

/// Compute the status of `repo` into the counters of `out`, writing nothing back; return the
/// repositories found ignored (relative to its work tree), at any depth of an ignored directory,
/// and those in directories of tracked files, which the walk never enters (unwalked.rs).
/// The stat data of an entry is trusted only for a file unchanged since `checked_out` (forged.rs).
/// HEAD's tree, when it has to be read, is first checked against the bounds with its paths
/// charged to `paths` (bounds.rs); when the index hashes to it (written_tree.rs) it is not read.
///
/// This is gix's `status()` taken apart, for control and speed, all three at once: HEAD^{tree}
/// against the index on this thread (whose object cache the bounds check filled); the index against
/// the work tree on another, after the in-memory refresh (refresh.rs) marked the entries whose stat
/// data shows them unchanged, so that only the others are looked at (and hashed only if their stat
/// data changed or they are racily clean); the directory walk for untracked and ignored files on a
/// third, which first lists the directories of tracked files (settled.rs: the walk, the pattern
/// files' checks and the look for repositories in them pass by those that hold only what the
/// index names). Unlike `status()`, it never reads `.gitmodules` (a malformed one would fail the whole
/// status) and has nowhere to write the refreshed stat data to.
/// Below this many index entries the three parts run one after another on this thread (and gix's
/// comparison of the index with the work tree on one thread): for a few hundred files a thread
/// costs more than it saves (`bench/probe.sh --files 2000`, bench/README.md).
pub(super) const PARALLEL_FROM: usize = 1_000;

pub(super) fn count_status(
    repo: &gix::Repository,
    out: &mut Inspection,
    paths: &mut u64,
    checked_out: CheckedOut,
) -> Result<Vec<PathBuf>, gix::Error> {
    use gix::dir::walk::EmissionMode;

    let index = repo.index_or_empty()?;
    let root = repo
        .workdir()
        .ok_or_else(|| refused("no work tree".into()))?;
    let unhidden = unhidden(root, &index);
    let index: &gix::index::State = unhidden.as_ref().unwrap_or(&index);
    let distrusted = distrusted(index, checked_out);
    let index = distrusted.as_ref().unwrap_or(index);
    let head_tree = repo.head_tree_id_or_empty()?.detach();
    let walk = repo
        .dirwalk_options()?
        .emit_untracked(EmissionMode::Matching)
        .emit_ignored(Some(EmissionMode::CollapseDirectory))
        .emit_empty_directories(false)
        .recurse_repositories(false);
    // A small index is judged on this thread alone: a thread costs more than its share.
    let small = index.entries().len() < PARALLEL_FROM;
    let options = gix::status::index_worktree::Options {
        sorting: None,
        dirwalk_options: None,
        rewrites: None,
        thread_limit: small.then_some(1),
    };
    let judge = Judge {
        stat: repo.stat_options()?,
        fs: repo.filesystem_options()?,
    };
    let interrupt = std::sync::atomic::AtomicBool::new(false);

    // What the status reads whole of the work tree, bounded before it is read (patterns.rs): on
    // the walk's thread, which tells the comparison's once it knows, while that one refreshes.
    let (checked_tx, checked_rx) = std::sync::mpsc::channel();

    let (walk_repo, worktree_repo) = (repo.clone(), repo.clone());
    let interrupt = &interrupt;
    let walked = move || {
        let mut budget = BUDGET;
        let settled = settled(root, index);
        let checked = check_tracked(&walk_repo, root, index, &settled, &mut budget);
        let _ = checked_tx.send(checked.clone());
        checked.map_err(gix::Error::from_error)?;
        // The repositories no walk enters, in the directories not settled (a settled one holds no
        // `.git`: the index never names one).
        let tracked = in_tracked_directories(root, index, &settled);
        let mut walked = Walked::new(root, budget, settled);
        walk_repo.dirwalk(index, Vec::<BString>::new(), interrupt, walk, &mut walked)?;
        let mut repositories = match walked.refused {
            None => repositories_in(root, &walked.ignored_dirs).map_err(refused)?,
            Some(_) => Vec::new(),
        };
        repositories.extend(tracked);
        Ok::<_, gix::Error>((walked, repositories))
    };
    let tally = move || {
        let refreshed = worktree_repo
            .workdir()
            .and_then(|root| refreshed(root, index, judge));
        let checked = checked_rx
            .recv()
            .unwrap_or_else(|_| Err(Refusal::Unreadable("not checked".into())));
        checked.map_err(gix::Error::from_error)?;
        let mut tally = Tally::default();
        worktree_repo
            .index_worktree_status(
                refreshed.as_ref().unwrap_or(index),
                Vec::<BString>::new(),
                &mut tally,
                gix::status::plumbing::index_as_worktree::traits::FastEq,
                NoSubmodules,
                &mut gix::progress::Discard,
                interrupt,
                options,
            )
            .map(|_| tally)
    };
    let mut staged = || {
        let mut staged = HashSet::<BString>::new();
        // The index holds HEAD's content exactly: nothing staged, and HEAD's trees unread.
        if let Some((_, entries)) = written_tree(index).filter(|&(id, _)| id == head_tree) {
            charge(entries, paths).map_err(refused)?;
            return Ok(staged);
        }
        check_tree(repo, head_tree, paths).map_err(refused)?;
        repo.tree_index_status(
            &head_tree,
            index,
            None,
            gix::status::tree_index::TrackRenames::Disabled,
            |change, _, _| {
                staged.insert(change.location().to_owned());
                Ok(std::ops::ControlFlow::Continue(()))
            },
        )
        .map(|_| staged)
        .map_err(gix::Error::from_error)
    };
    let (staged, tally, walked) = if small {
        // The walk first: it checks what the comparison may read.
        let walked = walked();
        (staged(), tally(), walked)
    } else {
        std::thread::scope(|scope| {
            let (walked, tally) = (scope.spawn(walked), scope.spawn(tally));
            let staged = staged();
            use std::panic::resume_unwind;
            let tally = tally.join().unwrap_or_else(|p| resume_unwind(p));
            (
                staged,
                tally,
                walked.join().unwrap_or_else(|p| resume_unwind(p)),
            )
        })
    };
    let (staged, tally, (walked, repositories)) = (staged?, tally?, walked?);
    if let Some(why) = walked.refused {
        return Err(refused(why));
    }

    let mut modified = tally.modified;
    modified.extend(staged);
    out.conflicted = tally.conflicted.len();
    out.modified = modified.difference(&tally.conflicted).count();
    out.untracked = walked.untracked;
    out.ignored = walked.ignored;
    Ok(repositories)
}

/// A copy of `index` in which no entry hides its work-tree file from the comparison, `None` when
/// none does. `--assume-unchanged` (`ASSUME_VALID`) and `--skip-worktree` make git's status and
/// gix's skip the file however it was edited since; removing the worktree would lose the edit. So
/// both are cleared, except a skip-worktree entry whose file is absent (a sparse checkout: its
/// content is in the index, and the comparison would call it deleted).
fn unhidden(root: &Path, index: &gix::index::State) -> Option<gix::index::State> {
    let hiding = Flags::ASSUME_VALID | Flags::SKIP_WORKTREE;
    if !index.entries().iter().any(|e| e.flags.intersects(hiding)) {
        return None;
    }
    let mut copy = index.clone();
    for (entry, path) in copy.entries_mut_with_paths() {
        entry.flags.remove(Flags::ASSUME_VALID);
        if entry.flags.contains(Flags::SKIP_WORKTREE) {
            let path = root.join(OsStr::from_bytes(path));
            let absent =
                matches!(path.symlink_metadata(), Err(e) if e.kind() == ErrorKind::NotFound);
            if !absent {
                entry.flags.remove(Flags::SKIP_WORKTREE);
            }
        }
    }
    Some(copy)
}

/// A status not computed: what it would have read is not what a job repository holds.
fn refused(why: String) -> gix::Error {
    gix::Error::from_error(std::io::Error::other(why))
}
