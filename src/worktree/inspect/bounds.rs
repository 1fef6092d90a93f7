//! What the inspection may read of the job's objects before it reads them: every object it
//! inflates (the commit and tag HEAD leads through, each tree of HEAD's) at most `MAX_OBJECT`
//! bytes, and HEAD's tree at most `MAX_PATHS` paths once expanded. The inspection runs in isolate's
//! own process: a 3 MB loose object inflated to 3 GB there, and four levels of 300 entries naming
//! the same subtree (a few KiB of objects) to 8.1 billion paths of an index. Over a bound, the
//! inspection fails, and the worktree is kept.

use gix::objs::Kind;

/// The largest object read.
const MAX_OBJECT: u64 = 64 << 20;
/// The most paths HEAD's tree may hold, subtrees expanded as often as they are named.
pub(super) const MAX_PATHS: u64 = 4_000_000;
/// The most tags followed from HEAD to its commit.
const MAX_TAGS: usize = 32;

/// Why a bound stopped the inspection.
pub(super) type Over = String;

/// What HEAD leads through to its tree (the tags and the commit), checked against the bounds
/// before anything reads them; `Ok` also for an unborn HEAD or one whose objects are missing (what
/// reads them says so). HEAD's tree itself is checked by the status, and only if it is not the
/// index's (`check_tree`).
pub(super) fn check_head(repo: &gix::Repository) -> Result<(), Over> {
    let Ok(head) = repo.head() else {
        return Ok(());
    };
    let Some(mut id) = head.id().map(|id| id.detach()) else {
        return Ok(());
    };
    for _ in 0..MAX_TAGS {
        let Some(kind) = small(repo, id)? else {
            return Ok(());
        };
        match kind {
            Kind::Tag => match repo
                .find_object(id)
                .ok()
                .and_then(|o| o.try_into_tag().ok())
            {
                Some(tag) => match tag.target_id() {
                    Ok(target) => id = target.detach(),
                    Err(_) => return Ok(()),
                },
                None => return Ok(()),
            },
            Kind::Commit | Kind::Tree | Kind::Blob => return Ok(()),
        }
    }
    Err(format!("HEAD leads through more than {MAX_TAGS} tags"))
}

/// Charge `paths` entries of a tree to `left`: over the bound, why.
pub(super) fn charge(paths: u64, left: &mut u64) -> Result<(), Over> {
    match left.checked_sub(paths) {
        Some(rest) => {
            *left = rest;
            Ok(())
        }
        None => Err(over_paths()),
    }
}

fn over_paths() -> Over {
    format!(
        "HEAD's tree holds more than {MAX_PATHS} paths (subtrees counted as often as named; \
         the nested repositories' all together)"
    )
}

/// The kind of `id` when it is at most `MAX_OBJECT` bytes; `None` when it is missing.
fn small(repo: &gix::Repository, id: gix::ObjectId) -> Result<Option<Kind>, Over> {
    let Ok(header) = repo.find_header(id) else {
        return Ok(None);
    };
    if header.size() > MAX_OBJECT {
        return Err(format!(
            "object {id} is {} bytes, over the {MAX_OBJECT} an inspection reads",
            header.size()
        ));
    }
    Ok(Some(header.kind()))
}

/// The tree `root` expanded as an index would be, counting paths against `left`, never past the
/// bounds.
pub(super) fn check_tree(
    repo: &gix::Repository,
    root: gix::ObjectId,
    left: &mut u64,
) -> Result<(), Over> {
    let mut pending = vec![root];
    while let Some(id) = pending.pop() {
        if small(repo, id)? != Some(Kind::Tree) {
            continue;
        }
        let Ok(tree) = repo.find_tree(id) else {
            continue;
        };
        let Ok(decoded) = tree.decode() else {
            continue;
        };
        for entry in &decoded.entries {
            charge(1, left)?;
            if entry.mode.is_tree() {
                pending.push(entry.oid.to_owned());
            }
        }
    }
    Ok(())
}

/// Whether `id` may be read (at most `MAX_OBJECT` bytes, or missing: nothing to read).
pub(super) fn readable(repo: &gix::Repository, id: gix::ObjectId) -> bool {
    small(repo, id).is_ok()
}
