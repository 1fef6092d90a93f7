//! The user's checkout as a merge writes it, looked at from the checkout's own directory, one
//! component at a time and never through a link: what stands where a path's directories go (a
//! link, a file, a repository of its own), whether a path is there, and the removal of a file a
//! failed merge itself added. A name the job chose never leads a look or a removal elsewhere.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstatat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};

use super::plan::Kind;

/// What stands where a path's directory should be: the part of the path up to it, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum InTheWay {
    /// A symbolic link: what git wrote beneath it would land where it points.
    Link(String),
    /// A file (or anything that is not a directory).
    File(String),
    /// A directory that is a repository of its own (it holds `.git`): its files are not the
    /// checkout's, and git's look at the checkout does not go into them.
    Repository(String),
}

impl std::fmt::Display for InTheWay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, part) = match self {
            InTheWay::Link(part) => ("a link", part),
            InTheWay::File(part) => ("a file", part),
            InTheWay::Repository(part) => ("a repository of its own", part),
        };
        write!(
            f,
            "{} is {what} in the checkout, where the merge needs a directory",
            crate::controls::name(part)
        )
    }
}

/// The checkout's top directory, opened once: every look starts from it.
pub(super) fn open_top(dir: &Path) -> io::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    Ok(nix::fcntl::open(dir, flags, Mode::empty())?)
}

/// What stands where the directories of `name` (a path of the tree, `/`-separated) go beneath
/// `top`, if anything. A directory that is not there yet is no obstacle.
pub(super) fn in_the_way(top: &OwnedFd, name: &[u8]) -> io::Result<Option<InTheWay>> {
    let parts: Vec<&[u8]> = name.split(|&b| b == b'/').collect();
    let mut dir = top.try_clone()?;
    for (n, part) in parts[..parts.len().saturating_sub(1)].iter().enumerate() {
        let so_far = || String::from_utf8_lossy(&parts[..=n].join(&b'/')).into_owned();
        dir = match open_dir(&dir, part) {
            Ok(next) => next,
            Err(Errno::ENOENT) => return Ok(None),
            // A link to a directory says ENOTDIR or ELOOP: its own type tells.
            Err(Errno::ELOOP | Errno::ENOTDIR) => {
                let st = fstatat(&dir, OsStr::from_bytes(part), AtFlags::AT_SYMLINK_NOFOLLOW)?;
                let link = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFLNK;
                return Ok(Some(match link {
                    true => InTheWay::Link(so_far()),
                    false => InTheWay::File(so_far()),
                }));
            }
            Err(e) => return Err(e.into()),
        };
        match fstatat(&dir, ".git", AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(_) => return Ok(Some(InTheWay::Repository(so_far()))),
            Err(Errno::ENOENT) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(None)
}

/// Whether anything (a link included) is at `name` beneath `top`, looked at without following a
/// link on the way.
pub(super) fn present(top: &OwnedFd, name: &[u8]) -> io::Result<bool> {
    match parent_of(top, name)? {
        Some((dir, last)) => match fstatat(&dir, last, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(e.into()),
        },
        None => Ok(false),
    }
}

/// Removes the file at `name` beneath `top` that a failed merge added: only if it is what the merge
/// writes there (a regular file of `size` bytes of the executable bit `kind` says, or a link), and
/// never through a link on the way. Whether it was removed.
pub(super) fn remove_added(
    top: &OwnedFd,
    name: &[u8],
    kind: Kind,
    size: Option<u64>,
) -> io::Result<bool> {
    let Some((dir, last)) = parent_of(top, name)? else {
        return Ok(false);
    };
    let st = match fstatat(&dir, last, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::ENOENT) => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let format = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
    let executable = st.st_mode & 0o100 != 0;
    let written = match kind {
        Kind::File | Kind::Executable => {
            format == SFlag::S_IFREG
                && executable == (kind == Kind::Executable)
                && size == Some(st.st_size as u64)
        }
        Kind::Link => format == SFlag::S_IFLNK,
        _ => false,
    };
    if !written {
        return Ok(false);
    }
    unlinkat(&dir, last, UnlinkatFlags::NoRemoveDir)?;
    Ok(true)
}

/// The directory that holds `name` beneath `top`, opened without following a link, and the last
/// component; `None` when a directory on the way is missing or is not one.
fn parent_of<'a>(top: &OwnedFd, name: &'a [u8]) -> io::Result<Option<(OwnedFd, &'a OsStr)>> {
    let mut parts: Vec<&[u8]> = name.split(|&b| b == b'/').collect();
    let Some(last) = parts
        .pop()
        .filter(|l| !l.is_empty() && *l != b"." && *l != b"..")
    else {
        return Ok(None);
    };
    let mut dir = top.try_clone()?;
    for part in parts {
        dir = match open_dir(&dir, part) {
            Ok(next) => next,
            Err(Errno::ENOENT | Errno::ELOOP | Errno::ENOTDIR) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
    }
    Ok(Some((dir, OsStr::from_bytes(last))))
}

/// The directory `part` of `dir`, never through a link (`ELOOP` for a link, `ENOTDIR` for a file);
/// `.`, `..` and empty parts are refused (`ENOENT`: no tree names them).
fn open_dir(dir: &impl AsFd, part: &[u8]) -> nix::Result<OwnedFd> {
    if part.is_empty() || part == b"." || part == b".." {
        return Err(Errno::ENOENT);
    }
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    openat(dir, OsStr::from_bytes(part), flags, Mode::empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only what the merge wrote goes, and never through a link: a file of another size or
    /// executable bit, a directory, and a file beneath a link all stay.
    #[test]
    fn a_failed_merges_removal_takes_only_what_it_wrote_and_never_goes_through_a_link() {
        let scratch = tempfile::tempdir().unwrap();
        let (top, outside) = (scratch.path().join("top"), scratch.path().join("outside"));
        std::fs::create_dir_all(top.join("dir")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("key"), "secret\n").unwrap();
        std::os::unix::fs::symlink(&outside, top.join("link")).unwrap();
        std::fs::write(top.join("dir/written"), "abc\n").unwrap();
        std::fs::write(top.join("dir/other"), "abcdef\n").unwrap();
        let fd = open_top(&top).unwrap();
        assert!(!remove_added(&fd, b"link/key", Kind::File, Some(7)).unwrap());
        assert!(outside.join("key").exists());
        assert!(!remove_added(&fd, b"dir/other", Kind::File, Some(4)).unwrap());
        assert!(!remove_added(&fd, b"dir/written", Kind::Executable, Some(4)).unwrap());
        assert!(!remove_added(&fd, b"dir", Kind::File, None).unwrap());
        assert!(!remove_added(&fd, b"dir/../dir/written", Kind::File, Some(4)).unwrap());
        assert!(remove_added(&fd, b"dir/written", Kind::File, Some(4)).unwrap());
        assert!(!top.join("dir/written").exists() && top.join("dir/other").exists());
    }

    #[test]
    fn what_stands_where_a_directory_goes_is_named() {
        let scratch = tempfile::tempdir().unwrap();
        let top = scratch.path();
        std::fs::create_dir_all(top.join("repo/.git")).unwrap();
        std::fs::write(top.join("file"), "").unwrap();
        std::os::unix::fs::symlink("/", top.join("link")).unwrap();
        let fd = open_top(top).unwrap();
        let way = |name: &[u8]| in_the_way(&fd, name).unwrap();
        assert_eq!(way(b"link/etc/x"), Some(InTheWay::Link("link".into())));
        assert_eq!(way(b"file/x"), Some(InTheWay::File("file".into())));
        assert_eq!(way(b"repo/x"), Some(InTheWay::Repository("repo".into())));
        assert_eq!(way(b"new/dir/x"), None);
        assert_eq!(way(b"link"), None, "the last component is git's to replace");
        assert!(present(&fd, b"link").unwrap() && !present(&fd, b"link/etc").unwrap());
    }
}
