//! Stat data the job could have forged, never trusted. A status takes a file whose `lstat` matches
//! its index entry for unchanged without reading it, and the index is the job's to write: an entry
//! given its edited file's present `lstat` hides the edit, and the worktree would go with it.
//!
//! What no process can forge is a file's change time: a write, a rename, a link, a `chmod` or a
//! `utimensat` all set it to the present, and only the clock's owner could set it back. So a file
//! whose change time is before the end of isolate's checkout holds what the checkout wrote (the
//! base's content, in the project); any other may hold work. An entry is trusted only when it
//! records a change time before the checkout ended, and the comparison (told to compare change
//! times to the nanosecond, whatever the job's configuration says: open.rs) then trusts it only if
//! the file's is that same time. Every other entry's recorded change time is cleared, so that its
//! file is read and hashed, as a racily clean one is.

use gix::index::entry::stat;

/// When isolate's checkout of a worktree ended, to the nanosecond (the job started only once the
/// kernel's coarse clock, which dates the change times of files, had passed it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckedOut {
    At(stat::Time),
    /// Not known (a worktree made before isolate noted it, a note lost): no entry is trusted.
    Unknown,
}

/// A copy of `index` in which every entry that does not record a change time before `checked_out`
/// has none recorded, `None` when every entry does (the copy would change nothing).
pub(super) fn distrusted(
    index: &gix::index::State,
    checked_out: CheckedOut,
) -> Option<gix::index::State> {
    let trusted = |ctime: &stat::Time| match checked_out {
        CheckedOut::At(end) => *ctime < end,
        CheckedOut::Unknown => false,
    };
    if index.entries().iter().all(|e| trusted(&e.stat.ctime)) {
        return None;
    }
    let mut copy = index.clone();
    for entry in copy.entries_mut() {
        if !trusted(&entry.stat.ctime) {
            entry.stat.ctime = stat::Time::default();
        }
    }
    Some(copy)
}
