//! Commits reachable only from the job's reflogs (`git reset --hard HEAD~1`, a rebase, an amend, a
//! branch deleted) that hold content nobody else has: git would keep them for its reflog expiry;
//! removing the worktree removes them at once. A reflog commit whose every file (every object of
//! its tree) the project or one of the job's refs already holds loses nothing (an amended message,
//! a rebase that changed no file's content); one holding a file version found nowhere else is work.
//!
//! Read in-process like the rest of the inspection: the reflog files only if regular and bounded,
//! every object through the inspection's size bound, at most `MAX_VISITS` objects in all; over a
//! bound the read fails, and the worktree is kept.

use std::collections::HashSet;
use std::path::Path;

use gix::bstr::ByteSlice;
use gix::ObjectId;

use super::error::InspectError;
use super::linked::{is_dir, list, read_small};
use super::open::{open_project, open_untrusted};

/// The most bytes read of one reflog file (about 400,000 entries).
const MAX_REFLOG: u64 = 64 << 20;
/// The most reflog files read, and the deepest directory of them.
const MAX_FILES: usize = 10_000;
const MAX_DEPTH: usize = 32;
/// The most objects looked at in all.
const MAX_VISITS: usize = 4_000_000;
/// The largest object read.
const MAX_OBJECT: u64 = 64 << 20;

/// The commits (40-hex) of the job repository at `worktree` that only its reflogs reach and that
/// hold an object neither the project (git dir `project_git_dir`) nor the commits of `tips` (the
/// job's refs and HEAD) hold, sorted.
pub fn reflog_only(
    worktree: &Path,
    project_git_dir: &Path,
    tips: &[String],
) -> Result<Vec<String>, InspectError> {
    let git_dir = worktree.join(".git");
    let entries = reflog_ids(&git_dir)?;
    let project = open_project(project_git_dir)?;
    let candidates: Vec<ObjectId> = entries
        .into_iter()
        .filter(|id| !project.has_object(id))
        .collect();
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let job = open_untrusted(worktree, &git_dir)?;
    let mut walk = Walk {
        job: &job,
        project: &project,
        known: HashSet::new(),
        visits: 0,
        path: worktree,
    };
    // Everything the job's refs hold is kept with its branch and refs: known.
    for tip in tips {
        if let Ok(id) = ObjectId::from_hex(tip.as_bytes()) {
            walk.history(id)?;
        }
    }
    let mut lost = Vec::new();
    for id in candidates {
        if walk.known.contains(&id) {
            continue;
        }
        let Some(tree) = walk.commit_tree(id)? else {
            continue;
        };
        if walk.novel(tree)? {
            lost.push(id.to_string());
        }
    }
    lost.sort();
    lost.dedup();
    Ok(lost)
}

/// The walk over the job's objects, remembering what the job's refs hold.
struct Walk<'a> {
    job: &'a gix::Repository,
    project: &'a gix::Repository,
    known: HashSet<ObjectId>,
    visits: usize,
    path: &'a Path,
}

impl Walk<'_> {
    /// Marks known every commit from `tip` down to the project's, with every object of their trees.
    fn history(&mut self, tip: ObjectId) -> Result<(), InspectError> {
        let mut pending = vec![tip];
        while let Some(id) = pending.pop() {
            if !self.visit(id)? {
                continue;
            }
            let Some(commit) = self.small(id)?.and_then(|_| self.job.find_commit(id).ok()) else {
                continue;
            };
            pending.extend(commit.parent_ids().map(|p| p.detach()));
            if let Ok(tree) = commit.tree_id() {
                self.mark_tree(tree.detach())?;
            }
        }
        Ok(())
    }

    fn mark_tree(&mut self, root: ObjectId) -> Result<(), InspectError> {
        let mut pending = vec![root];
        while let Some(id) = pending.pop() {
            if !self.visit(id)? {
                continue;
            }
            for (entry, is_tree) in self.entries(id)? {
                if is_tree {
                    pending.push(entry);
                } else {
                    self.visit(entry)?;
                }
            }
        }
        Ok(())
    }

    /// Whether the tree `root` holds an object that is not known (nor the project's).
    fn novel(&mut self, root: ObjectId) -> Result<bool, InspectError> {
        let mut pending = vec![root];
        let mut seen = HashSet::new();
        while let Some(id) = pending.pop() {
            if self.is_known(id) || !seen.insert(id) {
                continue;
            }
            self.count()?;
            if !self.job.has_object(id) {
                // Named but absent: nothing of it is here to lose.
                continue;
            }
            let entries = self.entries(id)?;
            if entries.is_empty() && self.small(id)? != Some(gix::objs::Kind::Tree) {
                return Ok(true);
            }
            for (entry, is_tree) in entries {
                if is_tree {
                    pending.push(entry);
                } else if !self.is_known(entry) && self.job.has_object(entry) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The tree of commit `id`, if it is a readable commit.
    fn commit_tree(&mut self, id: ObjectId) -> Result<Option<ObjectId>, InspectError> {
        if self.small(id)? != Some(gix::objs::Kind::Commit) {
            return Ok(None);
        }
        Ok(self
            .job
            .find_commit(id)
            .ok()
            .and_then(|c| c.tree_id().ok())
            .map(|t| t.detach()))
    }

    /// The entries of tree `id` (object, whether a tree), submodule commits left out; none when it
    /// is not a tree.
    fn entries(&mut self, id: ObjectId) -> Result<Vec<(ObjectId, bool)>, InspectError> {
        if self.small(id)? != Some(gix::objs::Kind::Tree) {
            return Ok(Vec::new());
        }
        let Ok(tree) = self.job.find_tree(id) else {
            return Ok(Vec::new());
        };
        let Ok(decoded) = tree.decode() else {
            return Ok(Vec::new());
        };
        Ok(decoded
            .entries
            .iter()
            .filter(|e| !e.mode.is_commit())
            .map(|e| (e.oid.to_owned(), e.mode.is_tree()))
            .collect())
    }

    fn is_known(&self, id: ObjectId) -> bool {
        self.known.contains(&id) || self.project.has_object(id)
    }

    /// Marks `id` known; whether it was new to the walk (and not the project's).
    fn visit(&mut self, id: ObjectId) -> Result<bool, InspectError> {
        if self.is_known(id) {
            return Ok(false);
        }
        self.count()?;
        self.known.insert(id);
        Ok(true)
    }

    fn count(&mut self) -> Result<(), InspectError> {
        self.visits += 1;
        if self.visits > MAX_VISITS {
            return Err(InspectError::NotARepository {
                path: self.path.to_owned(),
                reason: format!("its reflogs lead to more than {MAX_VISITS} objects"),
            });
        }
        Ok(())
    }

    /// The kind of `id` when at most `MAX_OBJECT` bytes; `None` when missing; over it, an error.
    fn small(&self, id: ObjectId) -> Result<Option<gix::objs::Kind>, InspectError> {
        let Ok(header) = self.job.find_header(id) else {
            return Ok(None);
        };
        if header.size() > MAX_OBJECT {
            return Err(InspectError::NotARepository {
                path: self.path.to_owned(),
                reason: format!(
                    "object {id} is {} bytes, over the {MAX_OBJECT} read",
                    header.size()
                ),
            });
        }
        Ok(Some(header.kind()))
    }
}

/// The new ids of every entry of the job's reflogs: HEAD's, every ref's but the stash's (counted on
/// its own), each linked worktree's HEAD's; distinct, in no order.
pub(super) fn reflog_ids(git_dir: &Path) -> Result<HashSet<ObjectId>, InspectError> {
    let mut files = vec![git_dir.join("logs/HEAD")];
    collect(&git_dir.join("logs/refs"), 0, &mut files)?;
    if let Some(names) = list(&git_dir.join("worktrees"))? {
        files.extend(
            names
                .iter()
                .map(|n| git_dir.join("worktrees").join(n).join("logs/HEAD")),
        );
    }
    let stash = git_dir.join("logs/refs/stash");
    let mut ids = HashSet::new();
    for file in files.iter().filter(|f| **f != stash) {
        let Some(content) = read_small(file, MAX_REFLOG + 1)? else {
            continue;
        };
        // Its newest entries are last: a reflog read only in part would miss them.
        if content.len() as u64 > MAX_REFLOG {
            return Err(InspectError::NotARepository {
                path: file.clone(),
                reason: format!("a reflog of more than {MAX_REFLOG} bytes"),
            });
        }
        for line in content.lines() {
            let mut fields = line.splitn(3, |&b| b == b' ');
            let (_old, Some(new)) = (fields.next(), fields.next()) else {
                continue;
            };
            if let Ok(id) = ObjectId::from_hex(new) {
                if !id.is_null() {
                    ids.insert(id);
                }
            }
        }
    }
    Ok(ids)
}

/// The regular files below `dir`, never through a link, within the bounds.
fn collect(
    dir: &Path,
    depth: usize,
    out: &mut Vec<std::path::PathBuf>,
) -> Result<(), InspectError> {
    let Some(names) = list(dir)? else {
        return Ok(());
    };
    if depth > MAX_DEPTH || out.len() + names.len() > MAX_FILES {
        return Err(InspectError::NotARepository {
            path: dir.to_owned(),
            reason: format!("more than {MAX_FILES} reflogs, or deeper than {MAX_DEPTH}"),
        });
    }
    for name in names {
        let path = dir.join(name);
        if is_dir(&path)? {
            collect(&path, depth + 1, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}
