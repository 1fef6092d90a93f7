//! Writing a file another process may read, atomically: a reader sees the old file or the new
//! one, never a part (records, reports, the project's exclude file).

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically: temporary file in the same directory, fsync, rename, fsync
/// of the directory.
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| Error::io("cannot write", path, e);
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    if let Ok(d) = fs::File::open(dir) {
        // Durability of the rename; a failure here does not make the record wrong, only maybe older.
        let _ = d.sync_all();
    }
    Ok(())
}
