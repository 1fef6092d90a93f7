//! What a run made for its policy before the job started: the `missing = "create"` paths (each
//! missing parent included) and the state files an agent profile carried over. A run that fails
//! before CMD runs (125) undoes them, newest first, and only what is still as isolate left it: an
//! empty directory, a file of the same identity and size. Anything else is kept.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One path a run made.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Thing {
    Directory(PathBuf),
    File {
        path: PathBuf,
        dev: u64,
        ino: u64,
        len: u64,
    },
}

/// The paths a run made, in the order it made them.
#[derive(Debug, Default)]
pub struct Made(Vec<Thing>);

impl Made {
    pub fn directory(&mut self, path: &Path) {
        self.0.push(Thing::Directory(path.to_path_buf()));
    }

    /// `path`, a file isolate just wrote, as it is now.
    pub fn file(&mut self, path: &Path) {
        if let Ok(meta) = fs::symlink_metadata(path) {
            self.0.push(Thing::File {
                path: path.to_path_buf(),
                dev: meta.dev(),
                ino: meta.ino(),
                len: meta.len(),
            });
        }
    }

    pub fn extend(&mut self, other: Made) {
        self.0.extend(other.0);
    }

    /// Removes what is still as it was made, newest first (a directory only when empty).
    pub fn undo(&self) {
        for thing in self.0.iter().rev() {
            match thing {
                Thing::Directory(path) => {
                    let _ = fs::remove_dir(path);
                }
                Thing::File {
                    path,
                    dev,
                    ino,
                    len,
                } => {
                    let same = fs::symlink_metadata(path).is_ok_and(|m| {
                        m.is_file() && m.dev() == *dev && m.ino() == *ino && m.len() == *len
                    });
                    if same {
                        let _ = fs::remove_file(path);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_is_still_as_it_was_made_is_undone() {
        let dir = tempfile::tempdir().unwrap();
        let mut made = Made::default();
        let a = dir.path().join("a");
        let b = a.join("b");
        fs::create_dir(&a).unwrap();
        made.directory(&a);
        fs::create_dir(&b).unwrap();
        made.directory(&b);
        let seed = b.join("seed");
        fs::write(&seed, "x").unwrap();
        made.file(&seed);
        let kept = dir.path().join("kept");
        fs::create_dir(&kept).unwrap();
        made.directory(&kept);
        fs::write(kept.join("work"), "w").unwrap();
        made.undo();
        assert!(!a.exists());
        assert!(kept.join("work").exists());

        // A file changed since is kept, and so is its directory.
        let mut made = Made::default();
        fs::create_dir(&a).unwrap();
        made.directory(&a);
        fs::write(a.join("f"), "x").unwrap();
        made.file(&a.join("f"));
        fs::write(a.join("f"), "changed").unwrap();
        made.undo();
        assert_eq!(fs::read_to_string(a.join("f")).unwrap(), "changed");
    }
}
