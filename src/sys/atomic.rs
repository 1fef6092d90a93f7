//! Writing a file another process may read, atomically: a reader sees the old file or the new
//! one, never a part (records, reports, the project's exclude file, port locks).

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically and durably: temporary file in the same directory, fsync,
/// rename, fsync of the directory.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_with(path, bytes, Durability::New)
}

/// Writes `bytes` to `path` atomically and whole, without waiting for the rename to reach the disk:
/// for a state passed through, which the next write replaces (a running job's record). After a
/// crash of the machine the file is the old one or the new one, each whole, never empty.
pub fn write_passing(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_with(path, bytes, Durability::OldOrNew)
}

/// Writes `bytes` to `path` atomically, without waiting for the disk: for a file that a crash of
/// the machine makes moot (a port lock, whose owner the crash ended too). Readers still see the
/// old file or the new one, never a part; after a crash, maybe neither, or an empty file.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_with(path, bytes, Durability::Moot)
}

/// What a crash of the machine leaves of a file written here (a reader that runs meanwhile sees the
/// old file or the new one in each case).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Durability {
    /// The new file: its content synced, renamed, the directory synced.
    New,
    /// The old file or the new one, whole: the content synced before the rename.
    OldOrNew,
    /// Maybe neither, or an empty file: nothing synced.
    Moot,
}

fn replace_with(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| Error::io("cannot write", path, e);
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    if durability != Durability::Moot {
        tmp.as_file().sync_all().map_err(fail)?;
    }
    tmp.persist(path).map_err(|e| fail(e.error))?;
    if durability != Durability::New {
        return Ok(());
    }
    if let Ok(d) = fs::File::open(dir) {
        // Durability of the rename; a failure here does not make the record wrong, only maybe older.
        let _ = d.sync_all();
    }
    Ok(())
}
