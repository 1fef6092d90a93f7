//! Writing a file another process may read, atomically: a reader sees the old file or the new
//! one, never a part (records, reports, the project's exclude file, port locks).

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically and durably: temporary file in the same directory, fsync,
/// rename, fsync of the directory.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_with(path, bytes, true)
}

/// Writes `bytes` to `path` atomically, without waiting for the disk: for a file that a crash of
/// the machine makes moot (a port lock, whose owner the crash ended too). Readers still see the
/// old file or the new one, never a part; after a crash, maybe neither, or an empty file.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_with(path, bytes, false)
}

fn replace_with(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| Error::io("cannot write", path, e);
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    if durable {
        tmp.as_file().sync_all().map_err(fail)?;
    }
    tmp.persist(path).map_err(|e| fail(e.error))?;
    if !durable {
        return Ok(());
    }
    if let Ok(d) = fs::File::open(dir) {
        // Durability of the rename; a failure here does not make the record wrong, only maybe older.
        let _ = d.sync_all();
    }
    Ok(())
}
