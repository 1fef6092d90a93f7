//! The status of a job repository, counted: HEAD against the index, the index against the work
//! tree. Never writes the refreshed stat data back, never reads `.gitmodules`.

use std::collections::HashSet;

use gix::bstr::BString;

use super::inspection::Inspection;
use super::tally::{NoSubmodules, Tally};

/// Compute the status of `repo` into the counters of `out`, writing nothing back.
///
/// This is gix's `status()` taken apart, for control: HEAD^{tree} against the index on one
/// thread, the index against the work tree (a parallel stat check, hashing only files whose stat
/// data changed, plus the directory walk) on this one. Unlike `status()`, it never reads
/// `.gitmodules` (a malformed one would fail the whole status) and has nowhere to write the
/// refreshed stat data to.
pub(super) fn count_status(repo: &gix::Repository, out: &mut Inspection) -> Result<(), gix::Error> {
    use gix::dir::walk::EmissionMode;

    let index = repo.index_or_empty()?;
    let index: &gix::index::State = &index;
    let head_tree = repo.head_tree_id_or_empty()?.detach();
    let options = gix::status::index_worktree::Options {
        sorting: None,
        dirwalk_options: Some(
            repo.dirwalk_options()?
                .emit_untracked(EmissionMode::Matching)
                .emit_ignored(Some(EmissionMode::CollapseDirectory))
                .emit_empty_directories(false)
                .recurse_repositories(false),
        ),
        rewrites: None,
        thread_limit: None,
    };

    let tree_repo = repo.clone();
    let (staged, tally) = std::thread::scope(|scope| {
        let staged = scope.spawn(move || {
            let mut staged = HashSet::<BString>::new();
            tree_repo
                .tree_index_status(
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
        });
        let mut tally = Tally::default();
        let worktree = repo.index_worktree_status(
            index,
            Vec::<BString>::new(),
            &mut tally,
            gix::status::plumbing::index_as_worktree::traits::FastEq,
            NoSubmodules,
            &mut gix::progress::Discard,
            &std::sync::atomic::AtomicBool::new(false),
            options,
        );
        let staged = staged
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (staged, worktree.map(|_| tally))
    });
    let (staged, tally) = (staged?, tally?);

    let mut modified = tally.modified;
    modified.extend(staged);
    out.conflicted = tally.conflicted.len();
    out.modified = modified.difference(&tally.conflicted).count();
    out.untracked = tally.untracked;
    out.ignored = tally.ignored;
    Ok(())
}
