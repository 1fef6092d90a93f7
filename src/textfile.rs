//! Reading the small text files users hand isolate (policies, configuration), and the ones a job
//! wrote that isolate reads itself (`read_untrusted`): regular files only, at most so many bytes,
//! so that a name like `/dev/zero` or a FIFO can neither hang isolate nor exhaust its memory.

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Larger than any policy or configuration a person writes.
pub const MAX: u64 = 1 << 20;

pub fn read(path: &Path) -> io::Result<String> {
    read_with(path, MAX, 0)
}

/// The user's own file, links followed: as `read`, at most `max` bytes.
pub fn read_at_most(path: &Path, max: u64) -> io::Result<String> {
    read_with(path, max, 0)
}

/// A file of a job's repository or worktree: as `read`, but a symlink is not followed either (the
/// job may point it anywhere), and at most `max` bytes.
pub fn read_untrusted(path: &Path, max: u64) -> io::Result<String> {
    read_with(path, max, libc::O_NOFOLLOW)
}

/// As `read_untrusted`, the bytes as they are: a path a job's git wrote need not be UTF-8.
pub fn read_untrusted_bytes(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_bytes_with(path, max, libc::O_NOFOLLOW)
}

fn read_with(path: &Path, max: u64, flags: libc::c_int) -> io::Result<String> {
    String::from_utf8(read_bytes_with(path, max, flags)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// A regular file that isolate reads as it grows (a job's log), opened for reading: not through a
/// link, and never a FIFO or a device, whatever was put at its name.
pub fn open_untrusted(path: impl AsRef<Path>) -> io::Result<std::fs::File> {
    open_regular(path.as_ref(), libc::O_NOFOLLOW)
}

fn open_regular(path: &Path, flags: libc::c_int) -> io::Result<std::fs::File> {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before the type check below.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | flags)
        .open(path)?;
    match file.metadata()?.is_file() {
        true => Ok(file),
        false => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        )),
    }
}

fn read_bytes_with(path: &Path, max: u64, flags: libc::c_int) -> io::Result<Vec<u8>> {
    let file = open_regular(path, flags)?;
    let meta = file.metadata()?;
    if meta.len() > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than {max} bytes"),
        ));
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_huge_files_are_refused() {
        assert!(read(Path::new("/dev/zero")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(read(&fifo).is_err(), "a FIFO is not a policy");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; (MAX + 1) as usize]).unwrap();
        assert!(read(&big).is_err());
        let ok = dir.path().join("ok.toml");
        std::fs::write(&ok, "a = 1\n").unwrap();
        assert_eq!(read(&ok).unwrap(), "a = 1\n");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert!(read(&link).is_ok() && read_untrusted(&link, MAX).is_err());
        assert!(read_untrusted(&fifo, MAX).is_err() && read_untrusted(&ok, 3).is_err());
    }
}
