//! State an agent profile carries over before the job starts (`[filesystem] seed`): the file where
//! the agent keeps it outside isolate, copied once to where the profile makes it keep it inside
//! (Claude Code's `~/.claude.json` to `~/.claude/.claude.json`, its configuration under
//! `CLAUDE_CONFIG_DIR`). Only when the target does not exist and the source is a regular file of
//! the user's; written atomically, mode 0600; never over anything.

use std::io::Write;
use std::path::Path;

use crate::sandbox::made::Made;
use crate::sandbox::plan::expand;
use crate::sandbox::policy::Seed;

/// The largest state file carried over.
const MAX: u64 = 64 << 20;

/// Carries each seed over, recording in `made` what it wrote; returns a note for each one carried,
/// and for each one that failed.
pub fn carry(seeds: &[Seed], made: &mut Made) -> Vec<String> {
    let mut notes = Vec::new();
    for seed in seeds {
        let (Ok(from), Ok(to)) = (expand(&seed.from), expand(&seed.to)) else {
            continue;
        };
        let (from, to) = (Path::new(&from), Path::new(&to));
        if std::fs::symlink_metadata(to).is_ok() {
            continue;
        }
        // The user's own file, a link to it followed (dotfile managers link it): a regular file,
        // read without waiting on a FIFO and at most MAX bytes.
        let text = match crate::textfile::read_at_most(from, MAX) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                notes.push(format!("could not carry {} over: {e}", seed.from));
                continue;
            }
        };
        match write_new(to, text.as_bytes()) {
            Ok(()) => {
                made.file(to);
                notes.push(format!(
                    "carried {} over to {} (where the job keeps it from now on)",
                    seed.from, seed.to
                ))
            }
            Err(e) => notes.push(format!(
                "could not carry {} over to {}: {e}",
                seed.from, seed.to
            )),
        }
    }
    notes
}

/// `bytes` as the new file `to`: written to a temporary file beside it, then linked into place
/// only if nothing is there yet.
fn write_new(to: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = to.parent().unwrap_or(Path::new("/"));
    let mut tmp = tempfile::Builder::new()
        .prefix(".isolate-seed-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // persist_noclobber: never over a file that appeared meanwhile.
    tmp.persist_noclobber(to).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_seed_is_a_private_new_file_and_never_replaces_one() {
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().join("kept.json");
        write_new(&to, b"{}").unwrap();
        let mode = std::fs::metadata(&to).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(write_new(&to, b"other").is_err());
        assert_eq!(std::fs::read(&to).unwrap(), b"{}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        assert!(write_new(&link, b"x").is_err());
        assert!(!dir.path().join("elsewhere").exists());
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 2);
    }
}
