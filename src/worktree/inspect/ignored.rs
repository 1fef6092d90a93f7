//! Repositories among the ignored files. Ignored files never keep a worktree, but a repository
//! in an ignored directory (a clone in `vendor/` the job committed in, a bare one in `build/`)
//! holds commits and work of its own, which removing the worktree would remove: so each directory
//! the status found ignored is searched for them, at any depth, by listing alone. (gix's walk can
//! find them too, entering every ignored directory with its rules: 30 times the cost of the whole
//! inspection for 20,000 ignored files, bench/README.md.)

use std::path::{Path, PathBuf};

/// The most entries listed in the ignored directories of one work tree: more and the inspection
/// fails (the worktree is kept, saying why).
const MAX_ENTRIES: usize = 2_000_000;

/// The repositories in the directories `dirs` of the work tree at `root` (relative to it, as they
/// are returned): a directory with a `.git` in it (a directory or a gitfile), or one laid out as
/// git lays out a bare repository (`HEAD`, `objects/`, `refs/`). Told from each directory's own
/// listing, without a look of its own; a repository is not entered, a link not followed.
pub(super) fn repositories_in(root: &Path, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut listed = 0usize;
    let mut pending: Vec<PathBuf> = dirs.to_vec();
    let mut subdirs = Vec::new();
    while let Some(rel) = pending.pop() {
        let cannot = |e: std::io::Error| format!("cannot list the ignored {}: {e}", shown(&rel));
        let entries = match std::fs::read_dir(root.join(&rel)) {
            Ok(entries) => entries,
            // Gone since the walk, or not a directory after all: nothing of it to lose here.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(cannot(e)),
        };
        let mut bare = Bare::default();
        let mut repository = false;
        subdirs.clear();
        for entry in entries {
            let entry = entry.map_err(cannot)?;
            listed += 1;
            if listed > MAX_ENTRIES {
                return Err(format!(
                    "the ignored directories hold more than {MAX_ENTRIES} entries, too many to \
                     tell whether a repository is among them"
                ));
            }
            let kind = entry.file_type().map_err(cannot)?;
            let name = entry.file_name();
            match name.as_encoded_bytes() {
                b".git" if kind.is_dir() || kind.is_file() => repository = true,
                b"HEAD" => bare.head = kind.is_file(),
                b"objects" => bare.objects = kind.is_dir(),
                b"refs" => bare.refs = kind.is_dir(),
                _ => {}
            }
            if kind.is_dir() {
                subdirs.push(rel.join(name));
            }
        }
        if repository || bare.head && bare.objects && bare.refs {
            found.push(rel);
        } else {
            pending.append(&mut subdirs);
        }
    }
    Ok(found)
}

/// What of a bare repository's layout a directory's listing showed.
#[derive(Default)]
struct Bare {
    head: bool,
    objects: bool,
    refs: bool,
}

fn shown(rel: &Path) -> String {
    crate::controls::name(&rel.to_string_lossy())
}
