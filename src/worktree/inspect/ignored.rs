//! Repositories among the ignored files. Ignored files never keep a worktree, but a repository
//! in an ignored directory (a clone in `vendor/` the job committed in, a bare one in `build/`)
//! holds commits and work of its own, which removing the worktree would remove: so each directory
//! the status found ignored is searched for them, at any depth, by listing alone. (gix's walk can
//! find them too, entering every ignored directory with its rules: 30 times the cost of the whole
//! inspection for 20,000 ignored files, bench/README.md.)
//!
//! A directory its owner may not list (a job's `chmod 000`) would go with the worktree all the same
//! (the removal gives it its owner's rights back): so it is given read and search for its owner,
//! listed, and given its own mode back when the search ends. A directory of another owner's, or
//! one that changed while it was opened, fails the inspection, which keeps the worktree.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{open, OFlag};
use nix::sys::stat::{fstat, Mode};

use crate::sys::mode::{mode_of, open_path, proc_path, set_mode};

/// The most entries listed in the ignored directories of one work tree: more and the inspection
/// fails (the worktree is kept, saying why).
const MAX_ENTRIES: usize = 2_000_000;

/// The most locked directories opened up in one search (each holds a descriptor until it ends).
const MAX_OPENED: usize = 256;

/// The repositories in the directories `dirs` of the work tree at `root` (relative to it, as they
/// are returned): a directory with a `.git` in it (a directory or a gitfile), or one laid out as
/// git lays out a bare repository (`HEAD`, `objects/`, `refs/`, links too) or a linked
/// worktree's git directory (`HEAD`, `commondir`). Told from each directory's own
/// listing, without a look of its own; a repository is not entered, a link not followed.
pub(super) fn repositories_in(root: &Path, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut listed = 0usize;
    let mut pending: Vec<PathBuf> = dirs.to_vec();
    let mut subdirs = Vec::new();
    let mut opened = Opened::default();
    while let Some(rel) = pending.pop() {
        let cannot = |e: io::Error| format!("cannot list {}: {e}", shown(&rel));
        let entries = match std::fs::read_dir(root.join(&rel)) {
            Ok(entries) => entries,
            // Gone since the walk, or not a directory after all: nothing of it to lose here.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                let dir = opened.open_up(root, &rel).map_err(|_| cannot(e))?;
                // Its descriptor's name, which names it whatever happens to the names on the way.
                std::fs::read_dir(proc_path(&dir)).map_err(cannot)?
            }
            Err(e) => return Err(cannot(e)),
        };
        let mut bare = Bare::default();
        let mut repository = false;
        subdirs.clear();
        for entry in entries {
            let entry = entry.map_err(cannot)?;
            listed += 1;
            if listed > MAX_ENTRIES {
                return Err(format!(
                    "the directories searched hold more than {MAX_ENTRIES} entries, too many to \
                     tell whether a repository is among them"
                ));
            }
            let kind = entry.file_type().map_err(cannot)?;
            let name = entry.file_name();
            // A link counts where git would follow it, for the look into it to refuse.
            let (dir, file) = (kind.is_dir(), kind.is_file());
            let link = kind.is_symlink();
            match name.as_encoded_bytes() {
                b".git" if dir || file => repository = true,
                b"HEAD" => bare.head = file || link,
                b"objects" => bare.objects = dir || link,
                b"refs" => bare.refs = dir || link,
                // A linked worktree's git directory, which takes the rest from another.
                b"commondir" => bare.common = file || link,
                _ => {}
            }
            if kind.is_dir() {
                subdirs.push(rel.join(name));
            }
        }
        if repository || bare.head && (bare.common || bare.objects && bare.refs) {
            found.push(rel);
        } else {
            pending.append(&mut subdirs);
        }
    }
    Ok(found)
}

/// The locked directories given their owner's read and search to be listed, each with the mode
/// it had, given back when the search ends (found or not), deepest first.
#[derive(Default)]
struct Opened {
    dirs: Vec<(OwnedFd, Mode)>,
}

impl Opened {
    /// Opens up the directory `rel` of `root`, reached one name at a time without following a
    /// link (a directory on the way its owner may not search, a `chmod 600`, opened up too), as
    /// an `O_PATH` descriptor.
    fn open_up(&mut self, root: &Path, rel: &Path) -> io::Result<OwnedFd> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let mut dir: OwnedFd = open(root, flags, Mode::empty())?;
        for part in rel.components() {
            let Component::Normal(name) = part else {
                return Err(io::Error::other("not a plain relative path"));
            };
            dir = match open_path(&dir, OsStr::new(name)) {
                Err(nix::errno::Errno::EACCES) => {
                    self.grant(&dir)?;
                    open_path(&dir, OsStr::new(name))?
                }
                opened => opened?,
            };
        }
        self.grant(&dir)?;
        Ok(dir)
    }

    /// Gives the directory `dir` (an `O_PATH` descriptor) read and search for its owner, if it
    /// is isolate's user's and lacks them, keeping a descriptor of it and the mode it had (once:
    /// a directory opened up already has them).
    fn grant(&mut self, dir: &OwnedFd) -> io::Result<()> {
        let mode = mode_of(dir)?;
        let wanted = Mode::S_IRUSR | Mode::S_IXUSR;
        if mode.contains(wanted) {
            return Ok(());
        }
        if self.dirs.len() >= MAX_OPENED {
            return Err(io::Error::other("too many locked directories"));
        }
        if fstat(dir)?.st_uid != nix::unistd::geteuid().as_raw() {
            return Err(io::Error::other("another user's"));
        }
        set_mode(dir, mode | wanted)?;
        self.dirs.push((dir.try_clone()?, mode));
        Ok(())
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        for (dir, mode) in self.dirs.drain(..).rev() {
            // A directory that cannot be given its mode back keeps the rights it was given: its
            // owner's read and search, no more.
            let _ = set_mode(&dir, mode);
        }
    }
}

/// What of a bare repository's layout a directory's listing showed.
#[derive(Default)]
struct Bare {
    head: bool,
    objects: bool,
    refs: bool,
    common: bool,
}

fn shown(rel: &Path) -> String {
    crate::controls::name(&rel.to_string_lossy())
}
