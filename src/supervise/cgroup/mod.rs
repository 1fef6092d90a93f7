//! A leaf cgroup v2 per job, where the supervisor may create one (root, or a delegated user slice):
//! `cgroup.kill` then stops the whole tree at once, and nothing in it can escape by double-forking or
//! `setsid`. Elsewhere isolate falls back to walking the supervisor's descendants (tree.rs).

mod limits;
mod place;
mod probe;

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::unistd::Pid;

use place::own_cgroup_dir;

pub use limits::Limited;
pub use place::unified_mount;
pub use probe::{probe, CgroupProbe};

/// A cgroup a child is started in: its directory, which `clone3(CLONE_INTO_CGROUP)` forks the
/// child into (sys::clone), and its `cgroup.procs`, open for writing, for a kernel that cannot do
/// that (before 5.7): there the child writes "0" to it between fork and exec to move itself in
/// before it can fork anything.
#[derive(Debug)]
pub struct ForChild {
    pub dir: File,
    pub procs: File,
    /// The cgroup's path: where a child placed by the fork is from its first instruction.
    pub path: PathBuf,
}

#[derive(Debug)]
pub struct Cgroup {
    path: PathBuf,
}

impl Cgroup {
    /// Creates `isolate-<id>` beside the supervisor's own cgroup's children (a child of the cgroup
    /// the supervisor is in). `None` when there is no writable cgroup v2 directory.
    pub fn create(id: &str) -> Option<Cgroup> {
        let own = own_cgroup_dir()?;
        let path = own.join(format!("isolate-{id}"));
        fs::create_dir(&path).ok()?;
        Some(Cgroup { path })
    }

    /// The cgroup `create` made for job `id`, if it still exists.
    pub fn for_job(id: &str) -> Option<Cgroup> {
        Cgroup::open(&own_cgroup_dir()?.join(format!("isolate-{id}")))
    }

    /// The cgroup a record names, if it still exists (and is one of isolate's).
    pub fn open(path: &Path) -> Option<Cgroup> {
        let name = path.file_name()?.to_str()?;
        (name.starts_with("isolate-") && path.join("cgroup.procs").is_file()).then(|| Cgroup {
            path: path.to_path_buf(),
        })
    }

    /// The cgroup the record of job `id` names, if it still exists and is that job's as isolate
    /// made it: named `isolate-<id>`, beneath the cgroup v2 mount, reached through no link. A
    /// record that names another (edited, or a copy) has isolate signal nothing there.
    pub fn of_record(path: &Path, id: &str) -> Option<Cgroup> {
        let named = path.file_name()?.to_str()? == format!("isolate-{id}");
        let real = fs::canonicalize(path).ok()?;
        let mounted = unified_mount().is_some_and(|mount| real.starts_with(mount));
        (named && mounted && real == path)
            .then(|| Cgroup::open(&real))
            .flatten()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What a child is placed in the cgroup with (see [`ForChild`]).
    pub fn procs_for_child(&self) -> Option<ForChild> {
        let dir = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(&self.path)
            .ok()?;
        let procs = OpenOptions::new()
            .write(true)
            .open(self.path.join("cgroup.procs"))
            .ok()?;
        Some(ForChild {
            dir,
            procs,
            path: self.path.clone(),
        })
    }

    /// Every process in the cgroup.
    pub fn pids(&self) -> Vec<Pid> {
        fs::read_to_string(self.path.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .map(Pid::from_raw)
            .collect()
    }

    pub fn contains(&self, pid: Pid) -> bool {
        self.pids().contains(&pid)
    }

    /// SIGKILL to every process in the cgroup, atomically (Linux 5.14+).
    pub fn kill(&self) -> bool {
        OpenOptions::new()
            .write(true)
            .open(self.path.join("cgroup.kill"))
            .and_then(|mut f| f.write_all(b"1"))
            .is_ok()
    }

    /// Removes the (empty) cgroup.
    pub fn remove(&self) {
        let _ = fs::remove_dir(&self.path);
    }
}

/// The cgroup v2 directory of process `pid`, when it is one of isolate's leaf cgroups (`isolate-…`,
/// which only the job's own processes can be in).
pub fn of_process(pid: Pid) -> Option<PathBuf> {
    Cgroup::open(&place::of(&pid.to_string())?).map(|cg| cg.path)
}
