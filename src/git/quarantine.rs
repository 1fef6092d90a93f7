//! Where objects from a remote wait until git has checked them: a directory of their own inside
//! the project's object store (`incoming-isolate-*`, as git's own receive quarantine), which the
//! fetching git writes as its object directory while it reads the project's store as an alternate.
//! Only once the fetch succeeded (every object checked, `fetch.fsckObjects`, and connected) are
//! its packs and loose objects moved into the store, each pack's index last, as git moves its own
//! quarantine; a fetch that fails leaves nothing behind, its partial pack going with the
//! directory. Never moves a file over one the store already has.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The quarantine of one fetch, removed with everything left in it when dropped.
pub(crate) struct Quarantine {
    dir: tempfile::TempDir,
    objects: PathBuf,
}

impl Quarantine {
    /// A new quarantine inside `objects`, the project's object store.
    pub(crate) fn new(objects: &Path) -> Result<Quarantine> {
        let dir = tempfile::Builder::new()
            .prefix("incoming-isolate-")
            .tempdir_in(objects)
            .map_err(|e| Error::io("cannot create a quarantine in", objects, e))?;
        let pack = dir.path().join("pack");
        fs::create_dir(&pack).map_err(|e| Error::io("cannot create", &pack, e))?;
        Ok(Quarantine {
            dir,
            objects: objects.to_path_buf(),
        })
    }

    /// The directory the fetching git writes its objects to (`GIT_OBJECT_DIRECTORY`).
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Moves what the fetch received into the project's store: loose objects, then each pack with
    /// its reverse index and, last, its index (what makes git see the pack). A `.keep` or any other
    /// file is left to go with the quarantine.
    pub(crate) fn migrate(self) -> Result<()> {
        let fail = |what, path: &Path, e| Error::io(what, path, e);
        for fan in entries(self.path())? {
            let name = fan.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let loose = name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit());
            if !loose || !fan.is_dir() {
                continue;
            }
            let into = self.objects.join(name);
            if let Err(e) = fs::create_dir(&into) {
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    return Err(fail("cannot create", &into, e));
                }
            }
            for object in entries(&fan)? {
                let Some(file) = object.file_name() else {
                    continue;
                };
                move_in(&object, &into.join(file))?;
            }
        }
        let pack = self.path().join("pack");
        let mut packs: Vec<PathBuf> = entries(&pack)?
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "pack"))
            .collect();
        packs.sort();
        let to = self.objects.join("pack");
        for p in packs {
            for extension in ["pack", "rev", "idx"] {
                let from = p.with_extension(extension);
                if from.exists() {
                    let Some(file) = from.file_name() else {
                        continue;
                    };
                    move_in(&from, &to.join(file))?;
                }
            }
        }
        Ok(())
    }
}

/// The entries of `dir`, sorted.
fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io("cannot list", dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    out.sort();
    Ok(out)
}

/// `from` moved to `to` unless `to` is there already (an object or pack is named by its content:
/// the one there is the same).
fn move_in(from: &Path, to: &Path) -> Result<()> {
    if fs::symlink_metadata(to).is_ok() {
        return Ok(());
    }
    // A hard link never replaces what appeared meanwhile; the quarantine's name goes with it.
    match fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io("cannot move a fetched object into", to, e)),
    }
}
