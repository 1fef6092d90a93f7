//! What the sandboxed reader of the import may read and write. Never more than the system, the
//! project and the job's object directory to read, and its own temporary directory to write.

use std::path::{Path, PathBuf};

use crate::git::project::Project;
use crate::sandbox::{plan, probe};

/// What the reading side of the import may read: the system (git and its libraries), the project
/// and the job's object directory. `None` without Landlock (then the job ran with --no-sandbox and
/// could read everything itself).
pub(super) fn reader_rules(
    project: &Project,
    job_objects: &Path,
    tmp: &Path,
) -> Option<plan::Rules> {
    let abi = probe::landlock_abi().filter(|&abi| abi >= probe::MIN_ABI)?;
    let mut read: Vec<PathBuf> = [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    read.extend([
        project.top.clone(),
        project.git_dir.clone(),
        project.objects.clone(),
        job_objects.to_path_buf(),
    ]);
    read.retain(|p| p.exists());
    let read = read
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let no_tcp = (abi >= probe::NETWORK_ABI).then(Vec::new);
    Some(plan::Rules {
        abi,
        read,
        list: Vec::new(),
        write: vec![tmp.to_path_buf()],
        worktree: Vec::new(),
        write_files: Vec::new(),
        devices: vec![PathBuf::from("/dev/null")],
        connect_tcp: no_tcp.clone(),
        bind_tcp: no_tcp,
        scope_signals: abi >= probe::SCOPES_ABI,
        scope_abstract_unix: abi >= probe::SCOPES_ABI,
        limits: Vec::new(),
        sockets: probe::seccomp().is_ok().then(plan::Sockets::closed),
        narrowed: None,
    })
}
