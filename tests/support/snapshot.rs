//! A byte-for-byte picture of a directory tree, to prove that an escape attempt changed nothing.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    File { mode: u32, bytes: Vec<u8> },
    Dir { mode: u32 },
    Link(PathBuf),
}

pub struct Snapshot(BTreeMap<PathBuf, Entry>);

/// What isolate itself adds to a project: its branches, pins, imported packs, and their logs.
const ISOLATE_ADDS: &[&str] = &[
    ".git/refs/heads/isolate",
    ".git/refs/isolate",
    ".git/logs",
    ".git/objects",
    ".git/packed-refs",
];

impl Snapshot {
    pub fn take(root: &Path) -> Snapshot {
        let mut map = BTreeMap::new();
        walk(root, root, &mut map);
        Snapshot(map)
    }

    /// Every entry of `self` is in `after`, identical; new entries only where isolate adds them.
    #[track_caller]
    pub fn assert_unchanged(&self, after: &Snapshot, what: &str) {
        for (path, entry) in &self.0 {
            match after.0.get(path) {
                None => panic!("{what}: {} was removed", path.display()),
                Some(e) if e != entry => panic!("{what}: {} changed", path.display()),
                Some(_) => {}
            }
        }
        for path in after.0.keys() {
            if !self.0.contains_key(path) && !ISOLATE_ADDS.iter().any(|p| path.starts_with(p)) {
                panic!("{what}: {} was created", path.display());
            }
        }
    }
}

fn walk(root: &Path, dir: &Path, map: &mut BTreeMap<PathBuf, Entry>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap().to_path_buf();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            map.insert(rel, Entry::Link(fs::read_link(&path).unwrap()));
        } else if meta.is_dir() {
            map.insert(rel, Entry::Dir { mode: meta.mode() });
            walk(root, &path, map);
        } else {
            let bytes = fs::read(&path).unwrap_or_default();
            map.insert(
                rel,
                Entry::File {
                    mode: meta.mode(),
                    bytes,
                },
            );
        }
    }
}
