//! A directory's names, read once, to answer "no such entry" for the many paths a policy names in
//! it without an `lstat` each: a policy looks up ~80 credential stores under each home, nearly all
//! missing, and on this machine 80 `lstat`s of missing names cost ~0.2 ms where one listing costs
//! ~10 µs. A listing answers only where it answers exactly what `lstat` would: on a filesystem whose
//! lookup finds nothing its listing does not show (not /proc, a network or FUSE filesystem, nor
//! overlayfs, which keeps a merged directory's listing while any descriptor that read it is open,
//! and then misses a name written into a layer beside it; nor any other not named here), in a
//! directory this process may search, where no entry could be the name under another case (a
//! casefolded directory finds `.SSH` for `.ssh`), for a name `lstat` would not refuse as too long.
//! Anywhere else, and for every name it holds, the caller makes the `lstat` itself.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::Mode;
use nix::sys::statfs::{self, FsType};
use nix::unistd::{faccessat, AccessFlags};

/// Past this many entries a listing costs more than the lookups it saves.
const MOST: usize = 4096;

/// Filesystems whose directories list every name a lookup in them can find.
const LISTS_ALL: [FsType; 5] = [
    statfs::TMPFS_MAGIC,
    statfs::EXT4_SUPER_MAGIC,
    statfs::XFS_SUPER_MAGIC,
    statfs::BTRFS_SUPER_MAGIC,
    statfs::F2FS_SUPER_MAGIC,
];

/// The longest name these filesystems hold: `lstat` of a longer one is ENAMETOOLONG, not ENOENT.
const NAME_MAX: usize = 255;

/// The names of one directory, folded to ASCII lower case, or why none are known.
#[derive(Debug)]
pub(super) enum Listing {
    /// Read: every entry's name is ASCII, and folded here.
    Names(HashSet<Vec<u8>>),
    /// Not read, or not trustworthy: every lookup in it is made for real.
    Unlisted,
}

impl Listing {
    /// The names of `dir`, as `lstat` of `dir/NAME` would find them.
    pub(super) fn of(dir: &OsStr) -> Listing {
        Self::read(dir).unwrap_or(Listing::Unlisted)
    }

    fn read(dir: &OsStr) -> Option<Listing> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let mut handle = Dir::open(dir, flags, Mode::empty()).ok()?;
        let kind = statfs::fstatfs(&handle).ok()?.filesystem_type();
        if !LISTS_ALL.contains(&kind) {
            return None;
        }
        // `lstat` of an entry needs search permission here, which reading the names did not.
        faccessat(&handle, ".", AccessFlags::X_OK, AtFlags::AT_EACCESS).ok()?;
        let mut names = HashSet::new();
        for entry in handle.iter() {
            let name = entry.ok()?.file_name().to_bytes().to_ascii_lowercase();
            if !name.is_ascii() || names.len() == MOST {
                return None;
            }
            names.insert(name);
        }
        Some(Listing::Names(names))
    }

    /// Whether `lstat` of `name` in this directory can only say ENOENT: no entry is `name`, under
    /// any case, and the name is not too long to be one.
    pub(super) fn lacks(&self, name: &OsStr) -> bool {
        let name = name.as_bytes();
        match self {
            Listing::Names(names) => {
                name.is_ascii()
                    && name.len() <= NAME_MAX
                    && !names.contains(&name.to_ascii_lowercase())
            }
            Listing::Unlisted => false,
        }
    }
}

/// How many lookups in one directory are made for real before its names are read.
pub(super) const LIST_AFTER: u8 = 4;

/// A directory's state in one resolution: lookups counted until it is listed.
#[derive(Debug)]
pub(super) enum Seen {
    Counted(u8),
    Listed(Listing),
}

/// `path`'s directory and last component, where `path` is absolute, short enough for `lstat` to
/// look up (under PATH_MAX) and its last component a plain name (not empty, `.` or `..`): what
/// `lstat` of it looks up in that directory.
pub(super) fn split(path: &OsStr) -> Option<(&OsStr, &OsStr)> {
    let bytes = path.as_bytes();
    if bytes.len() >= libc::PATH_MAX as usize {
        return None;
    }
    let cut = bytes.iter().rposition(|&b| b == b'/')?;
    let name = &bytes[cut + 1..];
    if !bytes.starts_with(b"/") || matches!(name, b"" | b"." | b"..") {
        return None;
    }
    let dir = if cut == 0 { &bytes[..1] } else { &bytes[..cut] };
    Some((OsStr::from_bytes(dir), OsStr::from_bytes(name)))
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use super::super::lookup::Lookup;
    use super::super::resolve::resolve_rule;
    use super::super::Access;
    use super::*;
    use crate::sandbox::policy::{Missing, PathRule};

    fn resolve(path: &Path, access: Access, lookup: &mut Lookup) -> Option<std::path::PathBuf> {
        let rule = PathRule {
            path: path.display().to_string(),
            missing: Missing::Ignore,
        };
        resolve_rule(&rule, access, lookup).path
    }

    fn deny(path: &Path, lookup: &mut Lookup) -> Option<std::path::PathBuf> {
        resolve(path, Access::Deny, lookup)
    }

    #[test]
    fn the_missing_names_of_a_directory_cost_one_listing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap().join("home");
        fs::create_dir(&dir).unwrap();
        fs::create_dir(dir.join(".there")).unwrap();
        let depth = dir.components().count();
        let mut lookup = Lookup::new();
        for i in 0..50 {
            let store = dir.join(format!(".store{i}"));
            assert_eq!(deny(&store, &mut lookup), Some(store));
        }
        let there = dir.join(".there");
        assert_eq!(deny(&there, &mut lookup), Some(there));
        // The way down, the lookups before the listing, the listing and `.there`'s own.
        let most = depth + usize::from(LIST_AFTER) + 2;
        assert!(lookup.calls <= most, "{} > {most}", lookup.calls);
    }

    #[test]
    fn a_name_under_another_case_or_an_entry_not_ascii_is_looked_up_for_real() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        fs::create_dir(dir.join(".SSH")).unwrap();
        let listing = Listing::of(dir.as_os_str());
        assert!(listing.lacks(OsStr::new(".aws")), "{listing:?}");
        assert!(
            !listing.lacks(OsStr::new(".ssh")),
            "a casefolded directory finds .SSH"
        );
        assert!(!listing.lacks(OsStr::from_bytes(b".\xe2\x84\xaaube")));
        // KELVIN SIGN folds to k: a directory holding it is not listed at all.
        fs::create_dir(dir.join("\u{212a}ube")).unwrap();
        let listing = Listing::of(dir.as_os_str());
        assert!(!listing.lacks(OsStr::new(".aws")), "{listing:?}");
        assert!(!listing.lacks(OsStr::new(".kube")));
    }

    #[test]
    fn proc_is_never_listed_it_finds_threads_it_does_not_show() {
        let (send, receive) = std::sync::mpsc::channel();
        let (stop, wait) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            send.send(nix::unistd::gettid().as_raw()).unwrap();
            wait.recv().ok();
        });
        let tid = receive.recv().unwrap();
        let shown = fs::read_dir("/proc")
            .unwrap()
            .any(|e| e.unwrap().file_name() == *tid.to_string());
        assert!(
            !shown,
            "/proc lists thread {tid}: the case needs a hidden one"
        );
        assert!(matches!(
            Listing::of(OsStr::new("/proc")),
            Listing::Unlisted
        ));
        let mut lookup = Lookup::new();
        for i in 0..u32::from(LIST_AFTER) * 2 {
            let missing = format!("/proc/no-such-{i}");
            assert_eq!(
                resolve(Path::new(&missing), Access::Read, &mut lookup),
                None
            );
        }
        // A read rule of a path not there is skipped: this one is there.
        let hidden = Path::new("/proc").join(tid.to_string());
        assert_eq!(resolve(&hidden, Access::Read, &mut lookup), Some(hidden));
        stop.send(()).unwrap();
        thread.join().unwrap();
    }

    /// A name or a path too long for `lstat` is its ENAMETOOLONG, never a listing's ENOENT.
    #[test]
    fn a_name_or_path_too_long_is_refused_as_lstat_refuses_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        let mut lookup = Lookup::new();
        for i in 0..u32::from(LIST_AFTER) * 2 {
            let store = dir.join(format!(".store{i}"));
            assert_eq!(deny(&store, &mut lookup), Some(store));
        }
        let rule = PathRule {
            path: dir.join("x".repeat(300)).display().to_string(),
            missing: Missing::Ignore,
        };
        let detail = resolve_rule(&rule, Access::Deny, &mut lookup).detail;
        assert!(
            detail.as_deref().unwrap_or("").contains("os error 36"),
            "{detail:?}"
        );
        // A path as long as PATH_MAX is never split, so never answered from a listing.
        let deep = format!("{}/y", dir.join("d".repeat(4096)).display());
        assert_eq!(split(OsStr::new(&deep)), None);
    }

    #[test]
    fn only_plain_last_components_are_split() {
        let split = |p: &str| split(OsStr::new(p)).map(|(d, n)| (d.to_owned(), n.to_owned()));
        assert_eq!(split("/a/b"), Some(("/a".into(), "b".into())));
        assert_eq!(split("/b"), Some(("/".into(), "b".into())));
        for odd in ["/", "/a/", "/a/.", "/a/..", "a/b", ""] {
            assert_eq!(split(odd), None, "{odd}");
        }
    }
}
