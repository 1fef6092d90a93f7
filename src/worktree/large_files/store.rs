//! Git LFS stores: the project's (`<git dir>/lfs/objects`, or where the project's `lfs.storage`
//! puts it), which isolate writes, and a job's (`.git/lfs/objects` of its repository, the same
//! relative `lfs.storage` honoured), which it only reads, by descriptor (beneath.rs). An object is
//! `objects/<2 hex>/<2 hex>/<64 hex>`, its name its SHA-256: one is copied into the project's store
//! only once its bytes hash to its name, through a temporary file renamed into place, never over a
//! file already there.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::beneath::{child_dir, names, open_dir, open_regular, regular_size};
use crate::error::Result;
use crate::git;
use crate::git::project::Project;

/// Where LFS keeps its objects relative to a git directory when `lfs.storage` does not say.
const DEFAULT: &str = "lfs";

/// An object found in a job's store: its id, and its size, `None` when it is no regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub(super) oid: String,
    pub(super) size: Option<u64>,
}

/// The project's LFS store, and where the same configuration puts a job's.
pub(super) struct ProjectStore {
    /// `<storage>/objects`.
    objects: PathBuf,
    /// The storage directory relative to a git directory (the default, or a relative
    /// `lfs.storage`): the job's repository, which includes the project's configuration, keeps its
    /// objects there.
    relative: Option<PathBuf>,
}

impl ProjectStore {
    /// The project's store, as its (trusted) configuration places it.
    pub(super) fn of(project: &Project) -> Result<ProjectStore> {
        let out = git::try_run(&project.top, ["config", "--get", "lfs.storage"])?;
        let set = out
            .status
            .success()
            .then(|| out.text())
            .filter(|s| !s.is_empty());
        let storage = PathBuf::from(set.as_deref().unwrap_or(DEFAULT));
        Ok(ProjectStore {
            objects: project.git_dir.join(&storage).join("objects"),
            relative: storage.is_relative().then_some(storage),
        })
    }

    /// The job's store directories beneath its git directory, as components.
    pub(super) fn in_job(&self) -> Vec<Vec<String>> {
        let mut out = vec![vec![DEFAULT.to_string(), "objects".to_string()]];
        if let Some(rel) = &self.relative {
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .chain(std::iter::once("objects".to_string()))
                .collect();
            if !out.contains(&parts) && !parts.iter().any(|p| p == ".." || p == ".") {
                out.push(parts);
            }
        }
        out
    }

    fn path(&self, oid: &str) -> PathBuf {
        self.objects.join(&oid[0..2]).join(&oid[2..4]).join(oid)
    }

    /// Whether the project's store holds `oid` (of `size`, when given) as a regular file.
    pub(super) fn has(&self, oid: &str, size: Option<u64>) -> bool {
        fs::symlink_metadata(self.path(oid))
            .is_ok_and(|m| m.is_file() && size.map_or(true, |s| s == m.len()))
    }

    /// Copies `from` (`size` bytes, read from a job's store) into the project's store as `oid`,
    /// hashed on the way: `Ok(false)`, and nothing written, when its bytes are not that object.
    pub(super) fn copy_in(&self, mut from: fs::File, oid: &str, size: u64) -> io::Result<bool> {
        let dir = self.objects.join(&oid[0..2]).join(&oid[2..4]);
        fs::create_dir_all(&dir)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".isolate-")
            .tempfile_in(&dir)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut copied = 0u64;
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            copied += n as u64;
            // A file still growing (a job that runs) is not the object its name says.
            if copied > size {
                return Ok(false);
            }
            hasher.update(&buf[..n]);
            tmp.write_all(&buf[..n])?;
        }
        let hex: String = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if copied != size || hex != oid {
            return Ok(false);
        }
        tmp.as_file().sync_all()?;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o644))?;
        match tmp.persist_noclobber(dir.join(oid)) {
            Ok(_) => Ok(true),
            // Someone put it there meanwhile: an object is its name, when it has its size.
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                Ok(self.has(oid, Some(size)))
            }
            Err(e) => Err(e.error),
        }
    }
}

/// Every object in the job's store beneath `git_dir` at `parts`, by its name: the files
/// `<2 hex>/<2 hex>/<64 hex>` whose name begins with the directories' (anything else there is
/// git-lfs's own or no object). Each listing is charged to `budget`.
pub(super) fn job_objects(
    git_dir: &Path,
    parts: &[String],
    budget: &mut usize,
) -> io::Result<Vec<Found>> {
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let Some(objects) = open_dir(git_dir, &parts)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for first in names(&objects, budget)? {
        let Some(first_dir) = hex_dir(&objects, &first)? else {
            continue;
        };
        for second in names(&first_dir, budget)? {
            let Some(second_dir) = hex_dir(&first_dir, &second)? else {
                continue;
            };
            let prefix = format!("{}{}", first.to_string_lossy(), second.to_string_lossy());
            for name in names(&second_dir, budget)? {
                let Some(oid) = name
                    .to_str()
                    .filter(|n| is_oid(n) && n.starts_with(&prefix))
                else {
                    continue;
                };
                out.push(Found {
                    oid: oid.to_string(),
                    size: regular_size(&second_dir, &name),
                });
            }
        }
    }
    Ok(out)
}

/// The object `oid` of the job's store at `parts` beneath `git_dir`, opened to read when it is a
/// regular file.
pub(super) fn open_job_object(
    git_dir: &Path,
    parts: &[String],
    oid: &str,
) -> io::Result<(fs::File, u64)> {
    let mut path: Vec<&str> = parts.iter().map(String::as_str).collect();
    path.extend([&oid[0..2], &oid[2..4]]);
    let dir = open_dir(git_dir, &path)?.ok_or_else(|| io::Error::other("gone"))?;
    open_regular(&dir, OsStr::new(oid))
}

/// The directory `name` of `dir` when `name` is two lowercase hexadecimal digits; an error when
/// that name is a link or a file.
fn hex_dir(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<OwnedFd>> {
    let hex = name
        .to_str()
        .is_some_and(|n| n.len() == 2 && n.bytes().all(is_lower_hex));
    if !hex {
        return Ok(None);
    }
    match child_dir(dir, name) {
        Ok(fd) => Ok(Some(fd)),
        Err(nix::errno::Errno::ENOENT) => Ok(None),
        // git-lfs makes directories there: what a link or a file stands for is not known.
        Err(nix::errno::Errno::ENOTDIR | nix::errno::Errno::ELOOP) => {
            Err(io::Error::other(format!(
                "{} in the LFS store is no directory",
                name.to_string_lossy()
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// Whether `name` is an LFS object id: 64 lowercase hexadecimal digits.
pub(super) fn is_oid(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(is_lower_hex)
}

fn is_lower_hex(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'a'..=b'f')
}
