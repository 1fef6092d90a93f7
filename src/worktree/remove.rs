//! Removing a worktree directory, on every core, by directory descriptor: every directory is opened
//! relative to its parent's descriptor with `O_NOFOLLOW|O_DIRECTORY`, every entry removed with
//! `unlinkat` relative to the descriptor of the directory that holds it, so that no path is ever
//! resolved again once listed. A process that swaps a directory of the tree for a symlink while
//! the removal runs redirects nothing: the symlink is an entry like any other. A checkout of tens
//! of thousands of files takes as long to unlink as to write, and unlinking parallelises: the tree
//! is split into subtrees until there are enough to share, then the split directories are removed
//! deepest first.
//!
//! A tree that changes under the removal (a directory turned into something else, one that is not
//! empty when it should be) is left as it is from there on, and the error says so. Only call it on a
//! directory isolate created and whose removal the cleanup decision allowed.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstatat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};

/// Subtrees per thread before the split stops.
const SHARE: usize = 16;

/// One entry to remove: its name in the directory `parent`.
struct Entry {
    parent: Arc<OwnedFd>,
    name: OsString,
    is_dir: bool,
}

fn changed(what: &Path, why: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!(
        "{} changed while it was being removed ({why}); what is left was kept",
        what.display()
    ))
}

fn open_dir(parent: &impl AsFd, name: &OsStr) -> nix::Result<OwnedFd> {
    openat(
        parent,
        name,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
}

/// The entries of the directory `dir` (not `.` and `..`), with whether each is a directory (its own
/// type: a symlink to a directory is not one).
fn entries(dir: &Arc<OwnedFd>) -> nix::Result<Vec<Entry>> {
    let listing = Dir::from_fd(nix::unistd::dup(dir.as_fd())?)?;
    let mut out = Vec::new();
    for entry in listing {
        let entry = entry?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let is_dir = match entry.file_type() {
            Some(kind) => kind == Type::Directory,
            None => {
                let st = fstatat(dir.as_fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)?;
                SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR
            }
        };
        out.push(Entry {
            parent: Arc::clone(dir),
            name: name.to_os_string(),
            is_dir,
        });
    }
    Ok(out)
}

/// Removes one entry, a whole subtree for a directory.
fn remove(entry: &Entry) -> nix::Result<()> {
    if entry.is_dir {
        // ELOOP or ENOTDIR: no longer a directory since it was listed. Nothing is followed.
        let dir = Arc::new(open_dir(entry.parent.as_ref(), &entry.name)?);
        for inner in entries(&dir)? {
            remove(&inner)?;
        }
        unlinkat(
            entry.parent.as_fd(),
            entry.name.as_os_str(),
            UnlinkatFlags::RemoveDir,
        )
    } else {
        unlinkat(
            entry.parent.as_fd(),
            entry.name.as_os_str(),
            UnlinkatFlags::NoRemoveDir,
        )
    }
}

pub fn remove_tree(root: &Path) -> io::Result<()> {
    let threads = thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let (Some(parent), Some(name)) = (root.parent(), root.file_name()) else {
        return Err(io::Error::other(format!(
            "{} is not a directory isolate can remove",
            root.display()
        )));
    };
    // The worktree's parent is isolate's own directory, which no job can write; the worktree itself
    // is opened without following a link.
    let top_parent = Arc::new(open_dir(&nix::fcntl::AT_FDCWD, parent.as_os_str())?);
    let top = Entry {
        parent: Arc::clone(&top_parent),
        name: name.to_os_string(),
        is_dir: true,
    };
    let root_fd = Arc::new(open_dir(top_parent.as_ref(), name).map_err(io::Error::from)?);
    let mut work = entries(&root_fd).map_err(|e| changed(root, e))?;
    // Directories opened to split the work, removed (deepest first) once their contents are gone.
    let mut split: Vec<Entry> = vec![top];
    while work.len() < threads * SHARE && threads > 1 {
        let Some(i) = work.iter().position(|e| e.is_dir) else {
            break;
        };
        let next = work.swap_remove(i);
        let fd =
            Arc::new(open_dir(next.parent.as_ref(), &next.name).map_err(|e| changed(root, e))?);
        work.extend(entries(&fd).map_err(|e| changed(root, e))?);
        split.push(next);
    }
    let queue = Mutex::new(work);
    let first_error: Mutex<Option<Errno>> = Mutex::new(None);
    thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let next = queue.lock().ok().and_then(|mut q| q.pop());
                let Some(entry) = next else { break };
                if let Err(e) = remove(&entry) {
                    if let Ok(mut slot) = first_error.lock() {
                        slot.get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(changed(root, e));
    }
    for dir in split.iter().rev() {
        unlinkat(
            dir.parent.as_fd(),
            dir.name.as_os_str(),
            UnlinkatFlags::RemoveDir,
        )
        .map_err(|e| changed(root, e))?;
    }
    let _ = root_fd.as_raw_fd();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn removes_a_deep_tree_and_never_follows_symlinks() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), "keep").unwrap();
        let tree = root.path().join("wt");
        for d in 0..5 {
            let dir = tree.join(format!("only/d{d}/sub"));
            fs::create_dir_all(&dir).unwrap();
            for f in 0..50 {
                fs::write(dir.join(format!("f{f}")), "x").unwrap();
            }
        }
        std::os::unix::fs::symlink(outside.path(), tree.join("only/link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), tree.join("link-top")).unwrap();
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
        assert_eq!(
            fs::read_to_string(outside.path().join("keep")).unwrap(),
            "keep"
        );
    }

    #[test]
    fn a_tree_swapped_for_symlinks_while_it_is_removed_never_reaches_outside() {
        // A thread swaps directories of the tree for symlinks to a victim of the same shape while the
        // removal runs: a removal that re-resolves a listed path deletes the victim's files.
        for round in 0..3 {
            let root = tempfile::tempdir().unwrap();
            let victim = tempfile::tempdir().unwrap();
            let tree = root.path().join("wt");
            for d in 0..16 {
                for s in 0..4 {
                    let dir = tree.join(format!("d{d}/s{s}"));
                    fs::create_dir_all(&dir).unwrap();
                    fs::create_dir_all(victim.path().join(format!("d{d}/s{s}"))).unwrap();
                    fs::write(victim.path().join(format!("d{d}/s{s}/important")), "keep").unwrap();
                    for f in 0..10 {
                        fs::write(dir.join(format!("f{f}")), "x").unwrap();
                    }
                }
            }
            let stop = std::sync::atomic::AtomicBool::new(false);
            thread::scope(|s| {
                s.spawn(|| {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        for d in 0..16 {
                            let dir = tree.join(format!("d{d}"));
                            let _ = fs::rename(&dir, root.path().join(format!("gone{d}")));
                            let _ = std::os::unix::fs::symlink(
                                victim.path().join(format!("d{d}")),
                                &dir,
                            );
                        }
                    }
                });
                let _ = remove_tree(&tree);
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            for d in 0..16 {
                for s in 0..4 {
                    assert!(
                        victim.path().join(format!("d{d}/s{s}/important")).exists(),
                        "round {round}: the removal followed a swapped symlink"
                    );
                }
            }
        }
    }
}
