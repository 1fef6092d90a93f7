//! What a job's commits need that lives outside git's object store, so that no worktree is removed
//! with the only copy of it: Git LFS objects (a commit holds a pointer, the content is in the
//! repository's LFS store) and git-annex objects (a commit holds a symlink to them).
//!
//! At every import (`look` with `Bring::Home`), every object of the job's LFS store the project's
//! lacks is copied into the project's store, each checked to hash to its name (store.rs); then
//! what is left counts as work, said in words, and keeps the worktree: LFS objects only in the
//! job's store (one that could not be copied: not a regular file, not the object its name says),
//! LFS objects the job's new commits point to (pointer.rs) that neither store holds (the content may
//! be on an LFS server, or where the job's own configuration put it: isolate cannot tell, so it
//! keeps), and git-annex objects only in the job's annex (annex.rs; never copied). A survey
//! (`Bring::Nothing`) copies nothing and counts the same way.
//!
//! Nothing of the job's repository runs: its stores are read by descriptor, without following a
//! link (beneath.rs); the pointers are read from the project, where the import put the commits.

mod annex;
mod beneath;
mod pointer;
mod store;

use std::collections::HashSet;
use std::path::Path;

use crate::error::{Error, Result};
use crate::git::bounds::{bounds, SIZE_VAR};
use crate::git::project::Project;
use beneath::MAX_ENTRIES;
use store::{job_objects, open_job_object, ProjectStore};

/// Whether a look copies what the project lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bring {
    /// Copy the job's LFS objects into the project's store (an import).
    Home,
    /// Copy nothing (a survey).
    Nothing,
}

/// What a job's repository holds outside git's object store, after a look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outside {
    /// LFS objects this look copied into the project's store.
    pub copied: usize,
    /// What the project lacks, each kind in words (`2 LFS objects only in the job's store`): it
    /// keeps the worktree.
    pub lacking: Vec<String>,
}

/// The job's LFS and git-annex objects against the project's, with `commits` (base and tip, both in
/// the project) the job's new commits whose LFS pointers must find their objects; copying the job's
/// LFS objects into the project's store first when `bring` says so.
pub(crate) fn look(
    project: &Project,
    worktree: &Path,
    commits: Option<(&str, &str)>,
    bring: Bring,
) -> Outside {
    let mut outside = Outside::default();
    if let Err(e) = lfs(project, worktree, commits, bring, &mut outside) {
        outside
            .lacking
            .push(format!("its LFS objects cannot be looked at ({e})"));
    }
    let mut budget = MAX_ENTRIES;
    match annex::only_in_job(&worktree.join(".git"), &project.git_dir, &mut budget) {
        Ok(0) => {}
        Ok(n) => outside.lacking.push(format!(
            "{n} git-annex object{} only in the job's annex",
            plural(n)
        )),
        Err(e) => outside
            .lacking
            .push(format!("its git-annex objects cannot be looked at ({e})")),
    }
    outside
}

/// The LFS part of `look`.
fn lfs(
    project: &Project,
    worktree: &Path,
    commits: Option<(&str, &str)>,
    bring: Bring,
    outside: &mut Outside,
) -> Result<()> {
    let git_dir = worktree.join(".git");
    // The default store's place and the pointers need no configuration: a job with neither costs
    // a look (and, with commits, two git processes).
    let mut budget = MAX_ENTRIES;
    let unreadable = |e| Error::io("cannot read the job's LFS store in", &git_dir, e);
    let default = vec!["lfs".to_string(), "objects".to_string()];
    let found_default = job_objects(&git_dir, &default, &mut budget).map_err(unreadable)?;
    let pointers = match commits.filter(|(base, tip)| base != tip) {
        Some((base, tip)) => pointer::referenced(project, base, tip)?,
        None => Vec::new(),
    };
    if found_default.is_empty() && pointers.is_empty() {
        return Ok(());
    }
    let project_store = ProjectStore::of(project)?;
    let mut in_job: Vec<(Vec<String>, store::Found)> = Vec::new();
    for parts in project_store.in_job() {
        let found = match parts == default {
            true => found_default.clone(),
            false => job_objects(&git_dir, &parts, &mut budget).map_err(unreadable)?,
        };
        in_job.extend(found.into_iter().map(|f| (parts.clone(), f)));
    }
    // An object in both of the job's stores once, a regular file before what is not.
    in_job.sort_by(|(_, a), (_, b)| (&a.oid, a.size.is_none()).cmp(&(&b.oid, b.size.is_none())));
    in_job.dedup_by(|(_, a), (_, b)| a.oid == b.oid);
    // What the project lacks, and what copying it would take.
    let wanted: Vec<&(Vec<String>, store::Found)> = in_job
        .iter()
        .filter(|(_, f)| !project_store.has(&f.oid, f.size))
        .collect();
    let mut only_in_job: HashSet<&str> = wanted.iter().map(|(_, f)| f.oid.as_str()).collect();
    if bring == Bring::Home && !wanted.is_empty() {
        let bound = bounds()?.size;
        let total: u64 = wanted.iter().filter_map(|(_, f)| f.size).sum();
        if total > bound {
            outside.lacking.push(format!(
                "LFS objects of {total} bytes to bring into the project, over the import's size \
                 bound ({bound} bytes; {SIZE_VAR} sets it)"
            ));
        } else {
            for (parts, found) in &wanted {
                let Some(size) = found.size else { continue };
                let copied = open_job_object(&git_dir, parts, &found.oid)
                    .and_then(|(file, _)| project_store.copy_in(file, &found.oid, size));
                if matches!(copied, Ok(true)) {
                    outside.copied += 1;
                    only_in_job.remove(found.oid.as_str());
                }
            }
        }
    }
    if !only_in_job.is_empty() {
        let n = only_in_job.len();
        outside.lacking.push(format!(
            "{n} LFS object{} only in the job's store",
            plural(n)
        ));
    }
    let job_has: HashSet<&str> = in_job.iter().map(|(_, f)| f.oid.as_str()).collect();
    let missing = pointers
        .iter()
        .filter(|p| !project_store.has(&p.oid, Some(p.size)) && !job_has.contains(p.oid.as_str()))
        .count();
    if missing > 0 {
        outside.lacking.push(format!(
            "{missing} LFS object{} its commits point to in no store here (git lfs fetch brings \
             them into the project)",
            plural(missing)
        ));
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}
