//! What a failed `index-pack` leaves in the project: its `tmp_pack_*` (and `tmp_idx_*`,
//! `tmp_rev_*`) in `objects/pack`, up to the size bound each time, which git's own cleanup keeps
//! for two weeks. Those that appeared while the import ran, and that nothing wrote to since it
//! ended, are removed; nothing else of the object store is touched.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The temporary files of `objects/pack` before the import.
pub(super) struct Before {
    dir: PathBuf,
    names: HashSet<OsString>,
}

impl Before {
    pub(super) fn take(objects: &Path) -> Before {
        let dir = objects.join("pack");
        let names = temporary(&dir).into_iter().collect();
        Before { dir, names }
    }

    /// After a failed import that ended at `ended`: the temporary files it left, removed.
    pub(super) fn remove_new(&self, ended: SystemTime) {
        for name in temporary(&self.dir) {
            if self.names.contains(&name) {
                continue;
            }
            let path = self.dir.join(&name);
            // A file written after the import ended is another git's (a fetch of the user's).
            let ours = fs::symlink_metadata(&path)
                .is_ok_and(|m| m.is_file() && m.modified().is_ok_and(|at| at <= ended));
            if ours {
                let _ = fs::remove_file(&path);
            }
        }
    }
}

fn temporary(dir: &Path) -> Vec<OsString> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| {
            let n = n.as_encoded_bytes();
            [&b"tmp_pack_"[..], b"tmp_idx_", b"tmp_rev_"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .collect()
}
