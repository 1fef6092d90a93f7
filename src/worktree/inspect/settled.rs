//! The directories of tracked files the walk has nothing to find in: each holds nothing but what
//! the index names there, each of its kind (a file, a link, a directory that is settled too). The
//! walk passes them by (tally.rs), as it would have emitted nothing from them: what it looks for,
//! an untracked, ignored or unknown name, a `.git`, a tracked file turned into a directory, is
//! exactly what unsettles one. A gitlink or a sparse directory entry unsettles the directory
//! that holds it, and anything this cannot read, list or tell the kind of leaves the directory to
//! the walk: so the walk's verdict is never taken from here, only its work.
//!
//! Cheaper than the walk because a name is looked up in a table of one directory's names rather
//! than classified (gix builds each path, matches it against the pathspec and searches the whole
//! index for it); the listing is the same.

use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::path::Path;

use gix::bstr::{BString, ByteSlice};
use gix::index::entry::Mode;
use nix::dir::{Dir, Type};
use nix::fcntl::{openat2, OFlag, OpenHow, ResolveFlag};

/// What the index holds under one name of a directory.
#[derive(Clone, Copy, PartialEq)]
enum Expected {
    File,
    Link,
    Directory {
        settled: bool,
    },
    /// A gitlink, a sparse directory entry, or a name the index holds as two kinds.
    Unsettling,
}

/// A directory of tracked files, with the names the index holds in it.
struct Frame<'a> {
    /// Relative to the top.
    dir: &'a [u8],
    names: Vec<(&'a [u8], Expected)>,
}

/// The directories (relative to the work tree's top, which is never one of them) of the tracked
/// files of `index` that are settled in the work tree at `root`. One pass over the index, whose
/// entries of a directory come together: a directory is looked at once the entries have left it,
/// after every directory it holds.
pub(super) fn settled(root: &Path, index: &gix::index::State) -> HashSet<BString> {
    let mut settled = HashSet::new();
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let Ok(top) = nix::fcntl::open(root, flags, nix::sys::stat::Mode::empty()) else {
        return settled;
    };
    // The directories open, innermost last; the top is never looked at.
    let mut open: Vec<Frame> = Vec::new();
    for entry in index.entries() {
        let path = entry.path(index).as_bytes();
        let (dir, name) = match path.rfind_byte(b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&path[..0], path),
        };
        while open.last().is_some_and(|frame| !within(dir, frame.dir)) {
            close(&mut open, &top, &mut settled);
        }
        // The directories on the way down from the innermost open one.
        let mut from = open.last().map_or(0, |frame| frame.dir.len() + 1);
        while from < dir.len() {
            let end = dir[from..]
                .find_byte(b'/')
                .map_or(dir.len(), |at| from + at);
            if let Some(parent) = open.last_mut() {
                let unknown = Expected::Directory { settled: false };
                parent.names.push((&dir[from..end], unknown));
            }
            open.push(Frame {
                dir: &dir[..end],
                names: Vec::new(),
            });
            from = end + 1;
        }
        let expected = match entry.mode {
            Mode::FILE | Mode::FILE_EXECUTABLE => Expected::File,
            Mode::SYMLINK => Expected::Link,
            _ => Expected::Unsettling,
        };
        if let Some(here) = open.last_mut() {
            here.names.push((name, expected));
        }
    }
    while !open.is_empty() {
        close(&mut open, &top, &mut settled);
    }
    settled
}
/// Whether `dir` is `open` or lies beneath it.
fn within(dir: &[u8], open: &[u8]) -> bool {
    open.is_empty()
        || dir
            .strip_prefix(open)
            .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
}

/// The innermost open directory looked at, added to `settled` if it is, and its parent told.
fn close(open: &mut Vec<Frame>, top: &OwnedFd, settled: &mut HashSet<BString>) {
    let Some(mut frame) = open.pop() else {
        return;
    };
    let holds = holds_only(top, &mut frame);
    if holds {
        settled.insert(frame.dir.into());
    }
    // Its own name is the last its parent got: every entry since was beneath it.
    if let Some((_, Expected::Directory { settled })) =
        open.last_mut().and_then(|parent| parent.names.last_mut())
    {
        *settled = holds;
    }
}

/// Whether the directory of `frame` beneath `top` holds nothing but its names, each of its kind.
/// Opened beneath the top, through no link of any kind.
fn holds_only(top: &OwnedFd, frame: &mut Frame) -> bool {
    let names = &mut frame.names;
    names.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let twice = names
        .windows(2)
        .any(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1);
    if twice || names.iter().any(|&(_, kind)| kind == Expected::Unsettling) {
        return false;
    }
    let how = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)
        .resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_XDEV,
        );
    let Ok(fd) = openat2(top, frame.dir, how) else {
        return false;
    };
    let Ok(mut listing) = Dir::from_fd(fd) else {
        return false;
    };
    for entry in listing.iter() {
        let Ok(entry) = entry else {
            return false;
        };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let expected = names
            .binary_search_by(|(held, _)| (*held).cmp(name))
            .map(|at| names[at].1);
        let fits = match (expected, entry.file_type()) {
            (Ok(Expected::File), Some(Type::File)) => true,
            (Ok(Expected::Link), Some(Type::Symlink)) => true,
            (Ok(Expected::Directory { settled }), Some(Type::Directory)) => settled,
            _ => false,
        };
        if !fits {
            return false;
        }
    }
    true
}
