//! Reading the small text files users hand isolate (policies, configuration): regular files only,
//! at most `MAX` bytes, so that a name like `/dev/zero` or a FIFO can neither hang isolate nor
//! exhaust its memory.

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Larger than any policy or configuration a person writes.
pub const MAX: u64 = 1 << 20;

pub fn read(path: &Path) -> io::Result<String> {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before the type check below.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > MAX {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than {MAX} bytes"),
        ));
    }
    let mut text = String::new();
    file.take(MAX).read_to_string(&mut text)?;
    Ok(text)
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
    }
}
