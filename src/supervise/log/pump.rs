//! The thread's work: the pipe's bytes appended to the log, which is renamed to `output.log.1` (and
//! kept for a follower, generations.rs) and started again at its cap. Only this thread writes the
//! log.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

use super::generations::rotate;
use super::CHUNK;

/// Opens the log for writing at its end (only this thread writes it).
pub(super) fn open_log(path: &Path) -> io::Result<File> {
    let mut file = OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(path)?;
    file.seek(SeekFrom::End(0))?;
    Ok(file)
}

/// Moves everything from `read` into the log until EOF, rotating at `max` bytes. A plain read and
/// write through one buffer: measured on ext4, splice(2) from the pipe was half as fast as this
/// (and as `cat`), and on tmpfs no faster. What cannot be written (a full disk, the state
/// directory's filesystem filled by another job) is dropped and counted, and the pipe read on:
/// returning would close it and kill the job with SIGPIPE on its next write. Once the log takes
/// writes again, a line says how much was lost.
pub(super) fn pump(read: OwnedFd, file: File, path: &Path, max: u64) -> io::Result<()> {
    let mut size = file.metadata()?.len();
    let mut file = Some(file);
    let mut pipe = File::from(read);
    let mut buf = vec![0u8; CHUNK];
    let mut rotations = 0;
    let mut oldest = 1;
    let mut lost = Lost::default();
    loop {
        if size >= max || file.is_none() {
            if size >= max {
                rotations += 1;
                if let Err(e) = rotate(path, rotations, max, &mut oldest) {
                    lost.because(e);
                }
            }
            match open_log(path) {
                Ok(f) => {
                    size = f.metadata().map_or(0, |m| m.len());
                    file = Some(f);
                }
                Err(e) => {
                    lost.because(e);
                    file = None;
                    size = 0;
                }
            }
        }
        let want = CHUNK.min(max.saturating_sub(size) as usize).max(1);
        let n = match pipe.read(&mut buf[..want]) {
            // What was lost last is said too, where the log takes it now.
            Ok(0) => {
                if let (Some(f), true) = (file.as_mut(), lost.bytes > 0) {
                    let _ = f.write_all(lost.note().as_bytes());
                }
                return Ok(());
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let Some(f) = file.as_mut() else {
            lost.bytes += n as u64;
            continue;
        };
        if lost.bytes > 0 {
            let note = lost.note();
            if f.write_all(note.as_bytes()).is_ok() {
                size += note.len() as u64;
                lost = Lost::default();
            }
        }
        match f.write_all(&buf[..n]) {
            Ok(()) => size += n as u64,
            Err(e) => {
                lost.bytes += n as u64;
                lost.because(e);
                // Part of it may have gone: the file says how much it holds.
                size = f.metadata().map_or(size, |m| m.len());
            }
        }
    }
}

/// The output dropped since the log last took a write, and why.
#[derive(Default)]
struct Lost {
    bytes: u64,
    why: Option<io::Error>,
}

impl Lost {
    fn because(&mut self, e: io::Error) {
        self.why.get_or_insert(e);
    }

    /// The line the log gets once it takes writes again.
    fn note(&self) -> String {
        let why = self
            .why
            .as_ref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        format!(
            "\n[isolate: {} bytes of output could not be written to this log{why}]\n",
            self.bytes
        )
    }
}
