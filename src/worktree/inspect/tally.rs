//! What the index-to-work-tree comparison reports, tallied; submodules never looked into. Never
//! opens a submodule's configuration.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use gix::bstr::{BString, ByteSlice};

use super::patterns::check_dir;

/// What the index-to-work-tree comparison found.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) modified: HashSet<BString>,
    pub(super) conflicted: HashSet<BString>,
    pub(super) untracked: usize,
    pub(super) ignored: usize,
}

impl<'index> gix::status::plumbing::index_as_worktree_with_renames::VisitEntry<'index> for Tally {
    type ContentChange = ();
    type SubmoduleStatus = ();

    fn visit_entry(
        &mut self,
        entry: gix::status::plumbing::index_as_worktree_with_renames::Entry<'index, (), ()>,
    ) {
        use gix::dir::entry::Status as Dir;
        use gix::status::plumbing::index_as_worktree::EntryStatus;
        use gix::status::plumbing::index_as_worktree_with_renames::Entry;
        match entry {
            Entry::Modification {
                rela_path, status, ..
            } => match status {
                EntryStatus::Conflict { .. } => {
                    self.conflicted.insert(rela_path.to_owned());
                }
                // Same content, stale stat data: git would refresh the index here; we don't.
                EntryStatus::NeedsUpdate(_) => {}
                EntryStatus::Change(_) | EntryStatus::IntentToAdd => {
                    self.modified.insert(rela_path.to_owned());
                }
            },
            Entry::DirectoryContents { entry, .. } => match entry.status {
                Dir::Untracked => self.untracked += 1,
                Dir::Ignored(_) => self.ignored += 1,
                Dir::Tracked | Dir::Pruned => {}
            },
            // Rename tracking is off; should one be reported anyway, a tracked path is gone and
            // an untracked one appeared.
            Entry::Rewrite { source, .. } => {
                self.modified.insert(source.rela_path().to_owned());
                self.untracked += 1;
            }
        }
    }
}

/// What the directory walk found, counted as `Tally` counts it: what the status would have shown
/// of it (never an entry of a kind git cannot track).
pub(super) struct Walked {
    pub(super) untracked: usize,
    pub(super) ignored: usize,
    /// The directories found ignored, each whole (relative to the top; never entered by the
    /// walk): a repository among them is looked for (ignored.rs).
    pub(super) ignored_dirs: Vec<PathBuf>,
    /// The work tree's top, what is left of the pattern files' budget (patterns.rs), and what was
    /// wrong with a pattern file of a directory the walk would have entered (it then entered none
    /// more).
    root: PathBuf,
    budget: u64,
    pub(super) refused: Option<String>,
    /// The directories of tracked files it need not enter (settled.rs).
    settled: HashSet<BString>,
}

impl Walked {
    pub(super) fn new(root: &Path, budget: u64, settled: HashSet<BString>) -> Walked {
        Walked {
            untracked: 0,
            ignored: 0,
            ignored_dirs: Vec::new(),
            root: root.to_path_buf(),
            budget,
            refused: None,
            settled,
        }
    }
}

impl gix::dir::walk::Delegate for Walked {
    /// Before the walk enters a directory (and reads its `.gitignore`): its pattern files checked.
    fn can_recurse(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        for_deletion: Option<gix::dir::walk::ForDeletionMode>,
        worktree_root_is_repository: bool,
    ) -> bool {
        if self.refused.is_some() {
            return false;
        }
        // Nothing to find in it: passed by, as a tracked entry is (emitted, and not counted).
        if entry.status == gix::dir::entry::Status::Tracked
            && self.settled.contains(entry.rela_path.as_bstr())
        {
            return false;
        }
        // (A tracked directory's were checked from the index before the walk: the index's name
        // exactly, as `core.ignoreCase` is off, open.rs.)
        if entry.status != gix::dir::entry::Status::Tracked {
            let dir = self
                .root
                .join(std::ffi::OsStr::from_bytes(entry.rela_path.as_bytes()));
            if let Err(why) = check_dir(&self.root, &dir, &mut self.budget) {
                self.refused = Some(why);
                return false;
            }
        }
        entry.status.can_recurse(
            entry.disk_kind,
            entry.pathspec_match,
            for_deletion,
            worktree_root_is_repository,
        )
    }

    fn emit(
        &mut self,
        entry: gix::dir::EntryRef<'_>,
        _collapsed_directory_status: Option<gix::dir::entry::Status>,
    ) -> gix::dir::walk::Action {
        use gix::dir::entry::{Kind, Status};
        if entry.disk_kind != Some(Kind::Untrackable) {
            match entry.status {
                Status::Untracked => self.untracked += 1,
                Status::Ignored(_) => self.ignored += 1,
                Status::Tracked | Status::Pruned => {}
            }
        }
        let is_dir = matches!(entry.disk_kind, Some(Kind::Directory | Kind::Repository));
        if is_dir && matches!(entry.status, Status::Ignored(_)) {
            let rela = std::ffi::OsStr::from_bytes(entry.rela_path.as_bytes());
            self.ignored_dirs.push(PathBuf::from(rela));
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// Submodules are never looked into: opening one would read its configuration, which is as
/// untrusted as the job's. A changed submodule commit still shows as a staged gitlink.
#[derive(Clone)]
pub(super) struct NoSubmodules;

impl gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus for NoSubmodules {
    type Output = ();

    fn status(
        &mut self,
        _entry: &gix::index::Entry,
        _rela_path: &gix::bstr::BStr,
    ) -> gix::Result<Option<()>> {
        Ok(None)
    }
}
