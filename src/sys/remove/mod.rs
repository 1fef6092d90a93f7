//! Removing a tree isolate made (a worktree, a job's directory), on every core, by directory
//! descriptor: every directory is opened relative to its parent's descriptor with
//! `O_NOFOLLOW|O_DIRECTORY`, every entry removed with `unlinkat` relative to the descriptor of the
//! directory that holds it, so that no path is ever resolved again once listed. A process that
//! swaps a directory of the tree for a symlink while the removal runs redirects nothing: the
//! symlink is an entry like any other. A checkout of tens of thousands of files takes as long to
//! unlink as to write, and unlinking parallelises: the tree is split into subtrees until there are
//! enough to share, then the split directories are removed deepest first. A chain of directories
//! deeper than the descriptors a process may hold is moved up as it goes (entry.rs, `Deep`).
//!
//! A directory of the tree its owner may not list or write (a job's `chmod 000`) is given its
//! owner's rights first (entry.rs): the tree goes as a whole, as `rm -rf` would not.
//!
//! A tree that changes under the removal (a directory turned into something else, one that is not
//! empty when it should be) is left as it is from there on, and the error says so. Only call it on a
//! directory isolate created and whose removal the cleanup decision allowed.
//!
//! One entry and its removal by descriptor are entry.rs; the split of the tree across threads is
//! here.

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;

use nix::errno::Errno;
use nix::unistd::{unlinkat, UnlinkatFlags};

mod entry;

use entry::{changed, entries, open_dir, open_to_empty, remove, Deep, Entry};

/// Subtrees per thread before the split stops.
const SHARE: usize = 16;

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
    let root_fd = Arc::new(open_to_empty(top_parent.as_ref(), name).map_err(io::Error::from)?);
    let mut work = entries(&root_fd).map_err(|e| changed(root, e))?;
    // Directories opened to split the work, removed (deepest first) once their contents are gone.
    let mut split: Vec<Entry> = vec![top];
    // (Each split directory is held open until the end: a bound on them too, for a chain.)
    while work.len() < threads * SHARE && split.len() < threads * SHARE && threads > 1 {
        let Some(i) = work.iter().position(|e| e.is_dir) else {
            break;
        };
        let next = work.swap_remove(i);
        let fd = Arc::new(
            open_to_empty(next.parent.as_ref(), &next.name).map_err(|e| changed(root, e))?,
        );
        work.extend(entries(&fd).map_err(|e| changed(root, e))?);
        split.push(next);
    }
    let deep = Deep::new(Arc::clone(&root_fd));
    let queue = Mutex::new(work);
    let first_error: Mutex<Option<Errno>> = Mutex::new(None);
    thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let next = queue.lock().ok().and_then(|mut q| q.pop());
                let Some(entry) = next else { break };
                if let Err(e) = remove(&entry, 0, &deep) {
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
    // What lay too deep, moved up to the top meanwhile (and what lay too deep in that in turn).
    loop {
        let moved = std::mem::take(&mut *deep.moved.lock().unwrap_or_else(|e| e.into_inner()));
        if moved.is_empty() {
            break;
        }
        for entry in &moved {
            remove(entry, 0, &deep).map_err(|e| changed(root, e))?;
        }
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
mod tests;
