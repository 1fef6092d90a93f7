//! A command's real executable: found as exec would find it, every symlink resolved, and the first
//! bytes of it read without ever waiting on a FIFO. Judges nothing about what it finds.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// `command` as exec would find it (a path when it has a slash, else the first executable file of
/// that name on `path`), with every symlink resolved.
pub fn resolve(command: &str, cwd: &Path, path: Option<&str>) -> Option<PathBuf> {
    let found = if command.contains('/') {
        Some(cwd.join(command))
    } else {
        // An empty entry is the current directory, as execvp has it.
        path.unwrap_or("/usr/local/bin:/usr/bin:/bin")
            .split(':')
            .map(|dir| if dir.is_empty() { "." } else { dir })
            .map(|dir| cwd.join(dir).join(command))
            .find(|candidate| is_executable(candidate))
    }?;
    std::fs::canonicalize(found).ok()
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first 4 KiB of `file`, a regular file: opened non-blocking, so that a FIFO never hangs.
pub fn head(file: &Path) -> Option<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(file)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = Vec::new();
    file.take(4096).read_to_end(&mut head).ok()?;
    Some(head)
}
