//! The pattern files a status reads whole, `.gitignore` and `.gitattributes` in any directory of
//! the work tree, checked before gix reads them. gix reads each whole with no bound and keeps every
//! line it parsed (some fifty times the file's size in memory for a file of short lines), so a
//! sparse file of gigabytes, or a hundred directories of large ones, would be read all the same.
//! gix opens them without following a link, and where the work tree has a link or nothing it
//! reads the blob the index names instead: so each present must be a regular file (a FIFO would
//! block the open), each file or blob at most `MAX`, and all of them together at most `BUDGET`.
//! Never opens anything itself, but the job's `info/exclude`.
//!
//! Where the rules come from matters as much: ignored files never keep a worktree, so a rule the
//! job wrote where git reads rules but nobody reviews them would hide the files the user makes
//! later in it (`--resume`) from the cleanup. Two such places are refused, and the worktree kept:
//! a rule in `info/exclude` that the project's own (which isolate copied there: create/init.rs)
//! does not have, and a `.gitignore` the index does not hold in a directory that holds tracked
//! files (an untracked one that does not ignore itself counts as untracked work anyway). A
//! directory the job made holds its own `.gitignore` as it likes (a virtual environment's `*`).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use gix::bstr::{BString, ByteSlice};

/// The most one pattern file may hold. git reads up to 100 MiB of one; a job's worktree with more
/// than this is kept as unreadable (a generated `.gitattributes` of 300,000 lines is 5.5 MB).
const MAX: u64 = 8 << 20;
/// The most all of them may hold together.
pub(super) const BUDGET: u64 = 16 << 20;
const NAMES: [&str; 2] = [".gitignore", ".gitattributes"];

/// Why the status was not computed: rules the job wrote where nobody reviews them (said as they are,
/// with what to do), or pattern files the status cannot read safely.
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum Refusal {
    #[error("{0}")]
    Untrusted(String),
    #[error("{0}")]
    Unreadable(String),
}

impl From<String> for Refusal {
    fn from(why: String) -> Refusal {
        Refusal::Unreadable(why)
    }
}

/// The pattern files of `dir`, a directory of the work tree, taken from `budget`; or what is
/// wrong with one.
pub(super) fn check_dir(root: &Path, dir: &Path, budget: &mut u64) -> Result<(), String> {
    for name in NAMES {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        // A link, or a directory, gix takes for no file (it reads the index's blob: checked with
        // the index).
        if meta.is_symlink() || meta.is_dir() {
            continue;
        }
        let shown = shown(root, &path);
        if !meta.is_file() {
            return Err(format!("{shown} is not a regular file"));
        }
        take(budget, meta.len(), &shown)?;
    }
    Ok(())
}

/// The pattern files of the work tree's top and of every directory an entry of `index` is in, and
/// the blobs of the pattern files `index` names where the work tree has no regular file for them;
/// taken from `budget`. (The directories the status finds untracked are checked as the walk
/// reaches them: tally.rs.)
/// A directory `settled` names (settled.rs) is not looked at again unless the index holds a pattern
/// file in it: all it holds are names the index holds, each of its kind, so a pattern file there
/// is the index's, and one the index lacks is not there.
pub(super) fn check_tracked(
    repo: &gix::Repository,
    root: &Path,
    index: &gix::index::State,
    settled: &HashSet<BString>,
    budget: &mut u64,
) -> Result<(), Refusal> {
    check_dir(root, root, budget)?;
    check_ignore_tracked(root, index, b"")?;
    let patterned: HashSet<&[u8]> = index
        .entries()
        .iter()
        .map(|entry| entry.path(index).as_bytes())
        .filter_map(|path| match path.rfind_byte(b'/') {
            Some(slash) if NAMES.iter().any(|n| n.as_bytes() == &path[slash + 1..]) => {
                Some(&path[..slash])
            }
            _ => None,
        })
        .collect();
    let mut seen: HashSet<&[u8]> = HashSet::new();
    let mut last: &[u8] = b"";
    for entry in index.entries() {
        let path = entry.path(index).as_bytes();
        let (parent, name) = match path.rfind_byte(b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&path[..0], path),
        };
        if NAMES.iter().any(|n| n.as_bytes() == name) {
            check_blob(repo, root, path, entry.id, budget)?;
        }
        if parent.is_empty() || parent == last {
            continue;
        }
        last = parent;
        // The parent and each directory above it not seen yet (above a seen one, all were).
        let mut dir = parent;
        while seen.insert(dir) {
            if !settled.contains(dir.as_bstr()) || patterned.contains(dir) {
                check_dir(root, &root.join(OsStr::from_bytes(dir)), budget)?;
                check_ignore_tracked(root, index, dir)?;
            }
            match dir.rfind_byte(b'/') {
                Some(slash) => dir = &dir[..slash],
                None => break,
            }
        }
    }
    Ok(())
}

/// The `.gitignore` of `dir`, a directory that holds tracked files (`b""`: the top), is one the
/// index holds, if it is there at all.
fn check_ignore_tracked(root: &Path, index: &gix::index::State, dir: &[u8]) -> Result<(), Refusal> {
    let mut path = dir.to_vec();
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(b".gitignore");
    let on_disk = root.join(OsStr::from_bytes(&path));
    let present = std::fs::symlink_metadata(&on_disk).is_ok_and(|meta| meta.is_file());
    if !present || index.entry_by_path(path.as_bstr()).is_some() {
        return Ok(());
    }
    Err(Refusal::Untrusted(format!(
        "an untracked {}: commit it or delete it (its rules could hide files from the cleanup)",
        shown(root, &on_disk)
    )))
}

/// The rules of the project's own `info/exclude`: those of the job's that are trusted.
#[derive(Debug, Clone, Default)]
pub struct ProjectExcludes(HashSet<Vec<u8>>);

impl ProjectExcludes {
    /// The rules of the project's `info/exclude` under `git_dir` (none if it cannot be read: then
    /// a job's repository with rules there is kept).
    pub fn read(git_dir: &Path) -> ProjectExcludes {
        let text = read_bounded(&git_dir.join("info/exclude")).unwrap_or_default();
        ProjectExcludes(rules(&text).map(<[u8]>::to_vec).collect())
    }

    /// These, and `more` (the rules the job's policy added, as isolate noted them).
    pub fn and(mut self, more: Vec<Vec<u8>>) -> ProjectExcludes {
        self.0.extend(more);
        self
    }
}

/// Every rule of the job's `info/exclude` under `git_dir` is one of `trusted`.
pub(super) fn check_excludes(git_dir: &Path, trusted: &ProjectExcludes) -> Result<(), String> {
    let path = git_dir.join("info/exclude");
    let text = match read_bounded(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!(".git/info/exclude cannot be read: {e}")),
    };
    let untrusted = rules(&text).find(|rule| !trusted.0.contains(*rule));
    match untrusted {
        None => Ok(()),
        Some(rule) => Err(format!(
            "a rule in .git/info/exclude the project's has not ({}): remove it (it could hide \
             files from the cleanup)",
            crate::controls::name(&String::from_utf8_lossy(rule))
        )),
    }
}

/// The rules of an exclude file's text: its lines, without blank lines and comments.
fn rules(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.trim_ascii().is_empty() && !line.starts_with(b"#"))
}

/// A regular file, opened without following a link or blocking on a FIFO, read up to `MAX`
/// bytes (more is refused).
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = Vec::new();
    file.take(MAX + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX {
        return Err(std::io::Error::other(format!("more than {MAX} bytes")));
    }
    Ok(text)
}

/// The blob the index names for the pattern file at `path`, where gix would read it: the work tree
/// holds no regular file there. A blob that cannot be found gix cannot read either.
fn check_blob(
    repo: &gix::Repository,
    root: &Path,
    path: &[u8],
    id: gix::ObjectId,
    budget: &mut u64,
) -> Result<(), String> {
    let on_disk = root.join(OsStr::from_bytes(path));
    if std::fs::symlink_metadata(&on_disk).is_ok_and(|meta| meta.is_file()) {
        return Ok(());
    }
    let Ok(header) = repo.find_header(id) else {
        return Ok(());
    };
    take(
        budget,
        header.size(),
        &format!("the blob of {}", shown(root, &on_disk)),
    )
}

fn take(budget: &mut u64, len: u64, shown: &str) -> Result<(), String> {
    if len > MAX {
        return Err(format!(
            "{shown} is {len} bytes, more than isolate reads of a pattern file ({MAX})"
        ));
    }
    *budget = budget.checked_sub(len).ok_or_else(|| {
        format!("the .gitignore and .gitattributes files hold more than {BUDGET} bytes together")
    })?;
    Ok(())
}

/// `path` relative to the work tree, its control characters escaped (the job names it).
fn shown(root: &Path, path: &Path) -> String {
    crate::controls::name(&path.strip_prefix(root).unwrap_or(path).to_string_lossy())
}
