//! The stat refresh before the status, in memory: the index entries whose work-tree file has the
//! stat data the index recorded (and is not racily clean) marked up to date, so that the status
//! skips them as git's own refresh makes it skip them. Each file is looked at with `fstatat`
//! beneath its directory, opened one component at a time from the work tree's top without
//! following a link: cheaper than a path walk from `/` per file, and never through a link.
//!
//! An entry is marked only when gix's status would find it unchanged without reading it: its own
//! comparisons (`change_to_match_fs_with_values`, `Stat::matches`, `Stat::is_racy`) decide, with
//! the repository's own options. Anything else (a flag, a stage, a gitlink, a path component that
//! is not plain, a directory that cannot be opened, a stat that cannot be taken) is left unmarked,
//! for the status to judge as before. Nothing is written: the marks live in a copy of the index.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use gix::bstr::{BStr, ByteSlice};
use gix::index::entry::{stat, Flags, Mode, Stat};
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, FileStat, Mode as Perm, SFlag};

/// Entries per thread, and the most threads: as git's preload of the index (`preload-index.c`),
/// whatever the number of cores, so that a work tree on a disk has that many stats in flight.
const PER_THREAD: usize = 500;
const MAX_THREADS: usize = 20;

/// What decides whether an entry is unchanged: the repository's stat and file-system options.
#[derive(Clone, Copy)]
pub(super) struct Judge {
    pub(super) stat: stat::Options,
    pub(super) fs: gix::fs::Capabilities,
}

/// A copy of `index` whose entries unchanged in the work tree at `root` are marked up to date;
/// `None` when no entry could be marked (the copy would change nothing).
pub(super) fn refreshed(
    root: &Path,
    index: &gix::index::State,
    judge: Judge,
) -> Option<gix::index::State> {
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let root = nix::fcntl::open(root, flags, Perm::empty()).ok()?;
    let entries = index.entries();
    let threads = (entries.len() / PER_THREAD).clamp(1, MAX_THREADS);
    let chunk = entries.len().div_ceil(threads).max(1);
    let judged = |part: &[gix::index::Entry]| {
        let mut dirs = Cursor::new(&root);
        let racy = |now: &Stat| now.is_racy(index.timestamp(), judge.stat);
        part.iter()
            .map(|entry| unchanged(&mut dirs, entry, entry.path(index), judge, &racy))
            .collect::<Vec<bool>>()
    };
    let unchanged: Vec<Vec<bool>> = match threads {
        // One part: on this thread, a panic in it failing the part alone, as on its own thread.
        1 => {
            let part = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| judged(entries)));
            vec![part.unwrap_or_default()]
        }
        _ => std::thread::scope(|scope| {
            let parts: Vec<_> = entries
                .chunks(chunk)
                .map(|part| scope.spawn(move || judged(part)))
                .collect();
            parts
                .into_iter()
                .map(|part| part.join().unwrap_or_default())
                .collect()
        }),
    };
    // A part that failed marks nothing: its entries stay for the status to judge.
    let marks: Vec<bool> = unchanged
        .into_iter()
        .zip(entries.chunks(chunk))
        .flat_map(|(marks, part)| match marks.len() == part.len() {
            true => marks,
            false => vec![false; part.len()],
        })
        .collect();
    if !marks.contains(&true) {
        return None;
    }
    let mut copy = index.clone();
    for (entry, mark) in copy.entries_mut().iter_mut().zip(marks) {
        if mark {
            entry.flags.insert(Flags::UPTODATE);
        }
    }
    Some(copy)
}

/// Whether `entry` (at `path`) is what gix's status would find unchanged by its stat data alone.
fn unchanged(
    dirs: &mut Cursor<'_>,
    entry: &gix::index::Entry,
    path: &BStr,
    judge: Judge,
    racy: &dyn Fn(&Stat) -> bool,
) -> bool {
    // Stage 0, no flag but the on-disk format's; files and links only (gitlinks go to the status).
    if !entry.flags.difference(Flags::EXTENDED).is_empty()
        || !matches!(
            entry.mode,
            Mode::FILE | Mode::FILE_EXECUTABLE | Mode::SYMLINK
        )
    {
        return false;
    }
    // Racily clean as the index recorded it: racy too if it still matches, changed if not. Either
    // way the status must look at it: no stat taken here.
    if racy(&entry.stat) {
        return false;
    }
    let (dir, name) = match path.rfind_byte(b'/') {
        Some(slash) => (&path[..slash], &path[slash + 1..]),
        None => (&path[..0], path),
    };
    if !plain(name) {
        return false;
    }
    let Some(dir) = dirs.at(dir) else {
        return false;
    };
    let Ok(st) = fstatat(dir, name.as_bytes(), AtFlags::AT_SYMLINK_NOFOLLOW) else {
        return false;
    };
    let kind = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
    let is_file = kind == SFlag::S_IFREG;
    let is_symlink = kind == SFlag::S_IFLNK;
    if !is_file && !is_symlink {
        return false;
    }
    let is_executable = is_file && st.st_mode & libc::S_IXUSR == libc::S_IXUSR;
    let changed = entry.mode.change_to_match_fs_with_values(
        is_file,
        false,
        is_symlink,
        is_executable,
        judge.fs.symlink,
        judge.fs.executable_bit,
    );
    if changed.is_some() {
        return false;
    }
    let Some(now) = stat_of(&st) else {
        return false;
    };
    now.matches(&entry.stat, judge.stat)
        && (!entry.id.is_empty_blob() || entry.stat.size == 0)
        && !racy(&now)
}

/// The stat data as gix's `Stat::from_fs` takes it (ctime is the inode's change time, sizes and
/// numbers truncated to 32 bits as git does); `None` for a time before 1970 or after 2106.
fn stat_of(st: &FileStat) -> Option<Stat> {
    let time = |secs: i64, nsecs: i64| {
        Some(stat::Time {
            secs: u32::try_from(secs).ok()?,
            nsecs: u32::try_from(nsecs).ok().filter(|&n| n < 1_000_000_000)?,
        })
    };
    Some(Stat {
        mtime: time(st.st_mtime, st.st_mtime_nsec)?,
        ctime: time(st.st_ctime, st.st_ctime_nsec)?,
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u32,
    })
}

/// A path component opened as it is: not empty, not `.` or `..`, not `.git` (in any case),
/// printable ASCII without `\` or `:`, not ending in a dot or a space.
/// Anything else is left to the status, which has its own rules for it.
fn plain(name: &[u8]) -> bool {
    !name.is_empty()
        && name != b"."
        && name != b".."
        && !name.eq_ignore_ascii_case(b".git")
        && name
            .iter()
            .all(|&b| (0x20..0x7f).contains(&b) && b != b'\\' && b != b':')
        && !matches!(name.last(), Some(b'.' | b' '))
}

/// The directory the last entry was in, opened beneath the work tree's top without following a
/// link; a directory that could not be opened is remembered as such.
struct Cursor<'a> {
    root: &'a OwnedFd,
    path: Option<Vec<u8>>,
    fd: Option<OwnedFd>,
}

impl<'a> Cursor<'a> {
    fn new(root: &'a OwnedFd) -> Self {
        Cursor {
            root,
            path: None,
            fd: None,
        }
    }

    /// The directory `dir` (relative, `/`-separated, empty for the top), `None` if it cannot be
    /// opened as a real directory beneath the top.
    fn at(&mut self, dir: &[u8]) -> Option<std::os::fd::BorrowedFd<'_>> {
        if self.path.as_deref() != Some(dir) {
            self.fd = open_beneath(self.root, dir);
            self.path = Some(dir.to_vec());
        }
        match dir.is_empty() {
            true => Some(self.root.as_fd()),
            false => self.fd.as_ref().map(|fd| fd.as_fd()),
        }
    }
}

/// `dir` opened one plain component at a time from `root`, never through a link.
fn open_beneath(root: &OwnedFd, dir: &[u8]) -> Option<OwnedFd> {
    if dir.is_empty() {
        return None;
    }
    let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut fd: Option<OwnedFd> = None;
    for part in dir.split(|&b| b == b'/') {
        if !plain(part) {
            return None;
        }
        let at = fd.as_ref().map_or(root.as_fd(), |fd| fd.as_fd());
        fd = Some(openat(at, part, flags, Perm::empty()).ok()?);
    }
    fd
}
