//! The sandboxed reader of the import (`pack-objects` in the project, the job's objects an extra
//! alternate): its command line and environment, with the hygiene of every project-side git, and
//! what it may read and write. Never more than the system, the project and the job's object
//! directory to read, and its own temporary directory to write.

use std::ffi::OsString;
use std::path::Path;

use crate::git;

use crate::git::bounds::memory_config;
use crate::git::project::Project;
use crate::sandbox::{plan, probe};

/// What the reading side of the import may read: the system (git and its libraries), the project
/// and the job's object directory. `None` without Landlock (then the job ran with --no-sandbox and
/// could read everything itself).
/// Its address space is at most `memory`.
pub(super) fn reader_rules(
    project: &Project,
    job_objects: &Path,
    tmp: &Path,
    memory: u64,
) -> Option<plan::Rules> {
    let abi = probe::landlock_abi().filter(|&abi| abi >= probe::MIN_ABI)?;
    let mut read = vec![project.top.clone(), job_objects.to_path_buf()];
    read.extend(project.stores());
    let limit = plan::Limit {
        resource: plan::Resource::AddressSpace,
        value: memory,
    };
    let write = vec![tmp.to_path_buf()];
    Some(plan::Rules::own_reader(
        abi,
        &read,
        write,
        limit,
        probe::seccomp().is_ok(),
    ))
}

/// The reader's environment: the caller's less what would point git elsewhere, with the hygiene of
/// every project-side git (`git::ENV`), no global configuration, the job's objects as the extra
/// alternate, and `tmp` as its TMPDIR.
pub(super) fn reader_env(job_objects: &Path, tmp: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !git::redirects(k))
        .collect();
    env.push((
        "GIT_ALTERNATE_OBJECT_DIRECTORIES".into(),
        job_objects.into(),
    ));
    env.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()));
    // Replace refs are the job's word too (`refs/replace/` of the project is the user's, but
    // nothing the import reads needs them).
    env.push(("GIT_NO_REPLACE_OBJECTS".into(), "1".into()));
    env.extend(git::ENV.iter().map(|&(k, v)| (k.into(), v.into())));
    env.push(("TMPDIR".into(), tmp.into()));
    env
}

/// What the reader trusts of the job's object directory: object contents only. A commit-graph, a
/// reachability bitmap or a multi-pack-index there is the job's word about its objects, and a job
/// that patched its graph to give its tip the base's tree would have the tree left out of the pack
/// (found by the second attack pass: the project ended with a commit whose tree it lacked). Off,
/// git reads every commit and tree it walks from the objects themselves.
const TRUST_OBJECTS_ONLY: [&str; 6] = [
    "-c",
    "core.commitGraph=false",
    "-c",
    "pack.useBitmaps=false",
    "-c",
    "core.multiPackIndex=false",
];

/// The reader's command line: `git -C top`, the hygiene flags (`git::CONFIG`), the job's object
/// directory trusted for object contents only, `pack-objects`.
/// Its caches and maps are kept inside `memory` (`bounds::memory_config`).
pub(super) fn reader_argv(top: &str, memory: u64) -> Vec<String> {
    let own = ["git", "-C", top]
        .into_iter()
        .chain(git::CONFIG)
        .chain(TRUST_OBJECTS_ONLY);
    let pack = [
        "--no-pager",
        "pack-objects",
        "--revs",
        "--thin",
        "--stdout",
        "--quiet",
    ];
    own.map(str::to_string)
        .chain(memory_config(memory))
        .chain(pack.map(str::to_string))
        .collect()
}
