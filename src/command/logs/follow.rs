//! `logs -f`: the log read as one stream across its rotations until the job ends. The file held
//! open is read to its end; when the log's name points at another file, the held one has been
//! rotated away: it is read to its end once more (what was written before the rename), then the
//! next is the one rotated away after it, kept for a follower (`supervise::log`), or the log
//! itself. Nothing written is skipped, nothing is shown twice.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::thread;
use std::time::Duration;

use crate::error::Error;
use crate::job::store;
use crate::supervise::log::{successor, Next};

const POLL: Duration = Duration::from_millis(50);

/// The file being read, which file it is, and its generation once rotated, when known.
pub(super) struct Followed {
    file: Option<File>,
    inode: Option<u64>,
    generation: Option<u64>,
}

impl Followed {
    /// The file at `path` now (none yet: the log is created with the job).
    pub(super) fn open(path: &Path) -> Followed {
        Followed::from(crate::textfile::open_untrusted(path).ok())
    }

    fn from(file: Option<File>) -> Followed {
        let inode = file
            .as_ref()
            .and_then(|f| f.metadata().ok())
            .map(|m| m.ino());
        Followed {
            file,
            inode,
            generation: None,
        }
    }

    /// The same, known to become generation `n` when rotated.
    fn at(mut self, n: Option<u64>) -> Followed {
        self.generation = n;
        self
    }

    pub(super) fn inode(&self) -> Option<u64> {
        self.inode
    }

    /// Appends what is left of the file to `text`.
    pub(super) fn read_into(&mut self, text: &mut Vec<u8>) {
        if let Some(f) = self.file.as_mut() {
            let _ = f.read_to_end(text);
        }
    }

    /// Copies what is left of the file to `out`; whether there was any.
    fn drain(&mut self, buf: &mut [u8], out: &mut impl Write) -> Result<bool, Error> {
        let mut progressed = false;
        let Some(f) = self.file.as_mut() else {
            return Ok(false);
        };
        loop {
            match f.read(buf) {
                Ok(0) => return Ok(progressed),
                Ok(n) => {
                    out.write_all(&buf[..n]).map_err(Error::Output)?;
                    progressed = true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Ok(progressed),
            }
        }
    }
}

/// Prints what is appended from where `file` is until the job has ended and everything is printed.
pub(super) fn follow(
    dir: &Path,
    path: &Path,
    mut file: Followed,
    out: &mut impl Write,
) -> Result<(), Error> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut ended = false;
    loop {
        let progressed = file.drain(&mut buf, out)?;
        out.flush().map_err(Error::Output)?;
        let current = std::fs::metadata(path).ok().map(|m| m.ino());
        if current.is_some() && current != file.inode {
            // Rotated away: its last bytes, then the file that came after it.
            file.drain(&mut buf, out)?;
            let next = match file.inode {
                Some(done) => successor(path, done, file.generation),
                None => Next::Log(crate::textfile::open_untrusted(path).ok(), None),
            };
            file = match next {
                Next::Kept(next, n) => Followed::from(Some(next)).at(Some(n)),
                Next::Log(log, n) => Followed::from(log).at(n),
                Next::Lost(log) => {
                    say!("isolate: logs -f fell behind the output kept for it: some was skipped");
                    Followed::from(log)
                }
            };
            continue;
        }
        if ended {
            return Ok(());
        }
        if !progressed {
            // The supervisor finishes the log before it records the end: one more pass reads
            // whatever came last.
            ended = store::read_record(dir).map_or(true, |r| !r.effective_state().live());
            if !ended {
                thread::sleep(POLL);
            }
        }
    }
}
