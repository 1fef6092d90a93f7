//! git-annex objects: `annex/objects/<2>/<2>/<key>/<key>` of a repository's git directory, the
//! content its committed symlinks point to. isolate does not copy them (git-annex records where
//! each key is on a branch of its own, `git-annex`, which the import does not bring): a job whose
//! annex holds a key the project's annex lacks keeps its worktree. Read by descriptor, as the LFS
//! store is (beneath.rs); never runs git-annex.

use std::ffi::OsStr;
use std::io;
use std::path::Path;

use super::beneath::{child_dir, exists, names, open_dir};

/// How many keys of the job's annex (beneath `job_git_dir`) the project's (beneath
/// `project_git_dir`) lacks. Each listing is charged to `budget`.
pub(super) fn only_in_job(
    job_git_dir: &Path,
    project_git_dir: &Path,
    budget: &mut usize,
) -> io::Result<usize> {
    let Some(objects) = open_dir(job_git_dir, &["annex", "objects"])? else {
        return Ok(0);
    };
    let mut only = 0;
    for first in names(&objects, budget)? {
        let Ok(first_dir) = child_dir(&objects, &first) else {
            only += 1;
            continue;
        };
        for second in names(&first_dir, budget)? {
            let Ok(second_dir) = child_dir(&first_dir, &second) else {
                only += 1;
                continue;
            };
            for key in names(&second_dir, budget)? {
                let Ok(key_dir) = child_dir(&second_dir, &key) else {
                    only += 1;
                    continue;
                };
                // A key directory without its content holds nothing (a key dropped, or never got).
                if !exists(&key_dir, &key) {
                    continue;
                }
                let parts = [&first, &second, &key].map(|p| p.to_string_lossy().into_owned());
                let there = open_dir(
                    project_git_dir,
                    &["annex", "objects", &parts[0], &parts[1], &parts[2]],
                )?
                .is_some_and(|dir| exists(&dir, OsStr::new(&key)));
                if !there {
                    only += 1;
                }
            }
        }
    }
    Ok(only)
}
