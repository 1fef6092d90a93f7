//! The tree an index would write, hashed in memory as `git write-tree` hashes it with no cache
//! tree: when it is HEAD's tree, the index holds exactly HEAD's content (the same paths, modes and
//! ids, the hash says so for every subtree), so nothing is staged and HEAD's trees need not be
//! read. The job wrote the index, cache tree included, so the cache tree is not used: every tree is
//! hashed from the entries themselves.
//!
//! Only an index the comparison of HEAD's tree with it would read entry for entry is hashed: every
//! entry unconflicted, none intent-to-add, a file, executable, link or gitlink mode, the paths
//! strictly sorted and made of plain components. Anything else is `None`, for the comparison to
//! judge as before. gix hashes with SHA-1 collision detection: an index made to collide is not
//! hashed either.

use gix::bstr::ByteSlice;
use gix::index::entry::{Flags, Mode, Stage};
use gix::objs::Kind;
use gix::ObjectId;

/// The id of the tree `index` would write, and how many entries its trees hold (files and
/// subtrees, as `bounds::check_tree` counts HEAD's); `None` when it is not hashed (see above).
pub(super) fn written_tree(index: &gix::index::State) -> Option<(ObjectId, u64)> {
    let hash = index.object_hash();
    // The directories open along the current entry's path, outermost first: where each one's
    // path ends in `dir` (0 for the top), and its tree's bytes so far. `dir` is the innermost's
    // path, so that a path is copied once however deep it is.
    let mut open: Vec<(usize, Vec<u8>)> = vec![(0, Vec::new())];
    let mut dir: Vec<u8> = Vec::new();
    let mut counted = 0u64;
    let mut previous: Option<&[u8]> = None;
    for entry in index.entries() {
        let path = entry.path(index).as_bytes();
        if entry.stage() != Stage::Unconflicted
            || entry.flags.contains(Flags::INTENT_TO_ADD)
            || previous.is_some_and(|before| before >= path)
            || path
                .split(|&b| b == b'/')
                .any(|c| c.is_empty() || c.contains(&0))
        {
            return None;
        }
        previous = Some(path);
        let mode: &[u8] = match entry.mode {
            Mode::FILE => b"100644",
            Mode::FILE_EXECUTABLE => b"100755",
            Mode::SYMLINK => b"120000",
            Mode::COMMIT => b"160000",
            _ => return None,
        };
        let (parent, name) = match path.rfind_byte(b'/') {
            Some(slash) => (&path[..slash], &path[slash + 1..]),
            None => (&path[..0], path),
        };
        // Close the directories this entry is not in, innermost first: in a sorted index nothing
        // after it is in them either, and what follows sorts after them in their parent's tree.
        while open.len() > 1 && !within(parent, &dir[..open[open.len() - 1].0]) {
            close(&mut open, &mut dir, hash)?;
            counted += 1;
        }
        // Open those it is in below the innermost still open.
        while dir.len() < parent.len() {
            let from = if dir.is_empty() { 0 } else { dir.len() + 1 };
            let end = parent[from..]
                .find_byte(b'/')
                .map_or(parent.len(), |s| from + s);
            dir.clear();
            dir.extend_from_slice(&parent[..end]);
            open.push((end, Vec::new()));
        }
        push_entry(&mut open.last_mut()?.1, mode, name, entry.id.as_slice());
        counted += 1;
    }
    while open.len() > 1 {
        close(&mut open, &mut dir, hash)?;
        counted += 1;
    }
    let (_, top) = open.pop()?;
    let id = gix::objs::compute_hash(hash, Kind::Tree, &top).ok()?;
    Some((id, counted))
}

/// Whether the directory `dir` is `open` or inside it.
fn within(dir: &[u8], open: &[u8]) -> bool {
    open.is_empty() || dir == open || (dir.starts_with(open) && dir[open.len()] == b'/')
}

/// Hash the innermost open directory's tree, enter it in its parent's, and leave `dir` its
/// parent's path.
fn close(open: &mut Vec<(usize, Vec<u8>)>, dir: &mut Vec<u8>, hash: gix::hash::Kind) -> Option<()> {
    let (end, tree) = open.pop()?;
    let parent = open.last_mut()?;
    let from = if parent.0 == 0 { 0 } else { parent.0 + 1 };
    let id = gix::objs::compute_hash(hash, Kind::Tree, &tree).ok()?;
    push_entry(&mut parent.1, b"40000", &dir[from..end], id.as_slice());
    dir.truncate(parent.0);
    Some(())
}

/// One tree entry: `<mode> <name>\0<id>`.
fn push_entry(tree: &mut Vec<u8>, mode: &[u8], name: &[u8], id: &[u8]) {
    tree.extend_from_slice(mode);
    tree.push(b' ');
    tree.extend_from_slice(name);
    tree.push(0);
    tree.extend_from_slice(id);
}
