//! The filesystem lookups of one policy's resolution, each made once: a policy names ~150 paths
//! (the credential stores, under `HOME` and the real home), nearly all in the same few directories,
//! and resolving each on its own walked every directory above it again (`realpath` reads every
//! component as a link, the foreign-link check `lstat`s each). `Lookup` answers exactly what those
//! calls answer: `lstat` and `stat` by the exact bytes of their path, and a canonical path from its
//! parent's canonical path and one `lstat` of the last component, where that is `realpath`'s own
//! answer (see `canonicalize`); anything else is glibc's `realpath` itself. A directory in which
//! several lookups are made is listed once (listing.rs), and a name it lacks is ENOENT with no
//! `lstat`. It lives for one resolution only (a few milliseconds), and never answers for a path
//! that was not looked up.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::listing::{self, Listing, Seen, LIST_AFTER};

/// What one `lstat` or `stat` said of a path.
#[derive(Debug, Clone, Copy)]
struct Node {
    symlink: bool,
    dir: bool,
    socket: bool,
    uid: u32,
}

impl Node {
    fn of(meta: &fs::Metadata) -> Node {
        let kind = meta.file_type();
        Node {
            symlink: kind.is_symlink(),
            dir: kind.is_dir(),
            socket: kind.is_socket(),
            uid: meta.uid(),
        }
    }
}

/// Lookups made once each, keyed by the exact bytes of their path (never `Path`'s comparison, which
/// takes `a/b/` for `a/b`: `lstat` of the first follows a link at `b`).
pub(super) struct Lookup {
    /// This user's id, once asked.
    me: Option<u32>,
    lstat: HashMap<OsString, Result<Node, i32>>,
    stat: HashMap<OsString, Result<Node, i32>>,
    canonical: HashMap<OsString, Result<PathBuf, i32>>,
    /// The directories `lstat` looked in, by the exact bytes of their path.
    dirs: HashMap<OsString, Seen>,
    /// Calls into the kernel or libc made so far (for the tests: what the memo saves).
    pub(super) calls: usize,
}

impl Lookup {
    pub(super) fn new() -> Lookup {
        Lookup {
            me: None,
            lstat: HashMap::new(),
            stat: HashMap::new(),
            canonical: HashMap::new(),
            dirs: HashMap::new(),
            calls: 0,
        }
    }

    /// The first symbolic link on the way to `path` owned by neither this user nor root, with its
    /// owner; the walk stops, with `None`, at the first component that cannot be `lstat`ed.
    pub(super) fn foreign_link(&mut self, path: &Path) -> Option<(PathBuf, u32)> {
        let me = *self
            .me
            .get_or_insert_with(|| nix::unistd::getuid().as_raw());
        let mut walked = PathBuf::new();
        for part in path.components() {
            walked.push(part);
            let Ok(node) = self.lstat(walked.as_os_str()) else {
                return None;
            };
            if node.symlink && node.uid != me && node.uid != 0 {
                return Some((walked, node.uid));
            }
        }
        None
    }

    /// `fs::canonicalize(path)`, the same path or the same error. For a path written plainly
    /// (absolute, no `.`, `..`, empty component or trailing slash), from its parent's answer:
    /// glibc's `realpath` walks the components left to right, so the parent's walk is the first
    /// part of the path's own. Where the parent fails with ENOENT the path does too, at the same
    /// component; where the parent resolves to C, `realpath` next reads `C/name` as a link: if it
    /// does not exist the answer is ENOENT, if it is not a link the answer is `C/name`. Anything
    /// else (a link there, another error, a path not written plainly) is `realpath`'s own answer.
    pub(super) fn canonicalize(&mut self, path: &Path) -> io::Result<PathBuf> {
        // A NUL byte is std's own error, not an errno: never from the memo.
        if path.as_os_str().as_bytes().contains(&0) {
            return fs::canonicalize(path);
        }
        self.canonical_of(path.as_os_str())
            .map_err(io::Error::from_raw_os_error)
    }

    fn canonical_of(&mut self, path: &OsStr) -> Result<PathBuf, i32> {
        if let Some(known) = self.canonical.get(path) {
            return known.clone();
        }
        let answer = match plain_split(path.as_bytes()) {
            Some((parent, name)) => {
                let parent = self.canonical_of(OsStr::from_bytes(parent));
                match parent {
                    Err(libc::ENOENT) => Err(libc::ENOENT),
                    Err(_) => self.realpath(path),
                    Ok(dir) => {
                        let joined = dir.join(OsStr::from_bytes(name));
                        match self.lstat(joined.as_os_str()) {
                            Err(libc::ENOENT) => Err(libc::ENOENT),
                            Ok(node) if !node.symlink => Ok(joined),
                            _ => self.realpath(path),
                        }
                    }
                }
            }
            None => self.realpath(path),
        };
        self.canonical.insert(path.to_os_string(), answer.clone());
        answer
    }

    /// `path.is_dir()`: `stat` follows a link.
    pub(super) fn is_dir(&mut self, path: &Path) -> bool {
        self.stat(path.as_os_str()).is_ok_and(|n| n.dir)
    }

    /// Whether `path` is a unix socket (`stat`, following a link).
    pub(super) fn is_socket(&mut self, path: &Path) -> bool {
        self.stat(path.as_os_str()).is_ok_and(|n| n.socket)
    }

    fn realpath(&mut self, path: &OsStr) -> Result<PathBuf, i32> {
        self.calls += 1;
        fs::canonicalize(path).map_err(|e| errno(&e))
    }

    fn lstat(&mut self, path: &OsStr) -> Result<Node, i32> {
        if let Some(known) = self.lstat.get(path) {
            return *known;
        }
        let node = if self.listed_without(path) {
            Err(libc::ENOENT)
        } else {
            self.calls += 1;
            fs::symlink_metadata(path)
                .map(|m| Node::of(&m))
                .map_err(|e| errno(&e))
        };
        self.lstat.insert(path.to_os_string(), node);
        node
    }

    /// Whether `path`'s directory, listed, lacks its last component. The directory is listed at
    /// the `LIST_AFTER`th lookup in it, once.
    fn listed_without(&mut self, path: &OsStr) -> bool {
        let Some((dir, name)) = listing::split(path) else {
            return false;
        };
        if !self.dirs.contains_key(dir) {
            self.dirs.insert(dir.to_os_string(), Seen::Counted(0));
        }
        let Some(seen) = self.dirs.get_mut(dir) else {
            return false;
        };
        if let Seen::Counted(n) = seen {
            *n += 1;
            if *n < LIST_AFTER {
                return false;
            }
            self.calls += 1;
            *seen = Seen::Listed(Listing::of(dir));
        }
        matches!(seen, Seen::Listed(listing) if listing.lacks(name))
    }

    fn stat(&mut self, path: &OsStr) -> Result<Node, i32> {
        if let Some(known) = self.stat.get(path) {
            return *known;
        }
        // What `lstat` found that is no link is what `stat` finds.
        let node = match self.lstat.get(path) {
            Some(Ok(node)) if !node.symlink => Ok(*node),
            _ => {
                self.calls += 1;
                fs::metadata(path)
                    .map(|m| Node::of(&m))
                    .map_err(|e| errno(&e))
            }
        };
        self.stat.insert(path.to_os_string(), node);
        node
    }
}

/// `path` as its parent and last component, when it is written plainly: absolute, not `/` itself,
/// no empty, `.` or `..` component and no trailing slash (each of those changes how `realpath`
/// treats the component before it).
fn plain_split(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = path.strip_prefix(b"/")?;
    let plain = rest
        .split(|&b| b == b'/')
        .all(|part| !matches!(part, b"" | b"." | b".."));
    if !plain {
        return None;
    }
    let cut = path.iter().rposition(|&b| b == b'/')?;
    let parent = if cut == 0 { &path[..1] } else { &path[..cut] };
    Some((parent, &path[cut + 1..]))
}

/// The errno of an error from the filesystem (every one of them has one; EIO otherwise).
fn errno(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}
