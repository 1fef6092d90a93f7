//! Removing a worktree directory, on every core: a checkout of tens of thousands of files takes as
//! long to unlink as to write, and unlinking parallelises. The tree is split into subtrees until
//! there are enough to share, each removed with `std::fs::remove_dir_all` (which never follows a
//! symlink), then the split directories are removed deepest first. Only call it on a directory
//! isolate created and whose removal the cleanup decision allowed.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread;

/// Subtrees per thread before the split stops.
const SHARE: usize = 16;

pub fn remove_tree(root: &Path) -> io::Result<()> {
    let threads = thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let mut work: Vec<(PathBuf, bool)> = Vec::new();
    let mut split: Vec<PathBuf> = vec![root.to_path_buf()];
    let mut frontier = vec![root.to_path_buf()];
    while let Some(dir) = frontier.pop() {
        for entry in fs::read_dir(&dir)? {
            let entry = entry?;
            // The entry's own type (from readdir or lstat): a symlink to a directory is a file here.
            let is_dir = entry.file_type()?.is_dir();
            work.push((entry.path(), is_dir));
        }
        if work.len() >= threads * SHARE || threads == 1 {
            break;
        }
        // Not enough to share yet: open up the next directory of the list.
        if let Some(i) = work.iter().position(|(_, is_dir)| *is_dir) {
            let (next, _) = work.swap_remove(i);
            split.push(next.clone());
            frontier.push(next);
        }
    }
    let queue = Mutex::new(work);
    let first_error: Mutex<Option<io::Error>> = Mutex::new(None);
    thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let next = queue.lock().ok().and_then(|mut q| q.pop());
                let Some((path, is_dir)) = next else { break };
                let result = if is_dir {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
                if let Err(e) = result {
                    if let Ok(mut slot) = first_error.lock() {
                        slot.get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    for dir in split.iter().rev() {
        fs::remove_dir(dir)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
