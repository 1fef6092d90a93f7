//! A leaf cgroup v2 per job, where the supervisor may create one (root, or a delegated user slice):
//! `cgroup.kill` then stops the whole tree at once, and nothing in it can escape by double-forking or
//! `setsid`. Elsewhere isolate falls back to walking the supervisor's descendants (tree.rs).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use nix::unistd::Pid;
use serde::Serialize;

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

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `cgroup.procs`, open for writing: the child writes "0" to it between fork and exec to move
    /// itself in before it can fork anything.
    pub fn procs_for_child(&self) -> Option<File> {
        OpenOptions::new()
            .write(true)
            .open(self.path.join("cgroup.procs"))
            .ok()
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
    let cgroup = fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let relative = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = unified_mount()?.join(relative.trim_start_matches('/'));
    Cgroup::open(&dir).map(|cg| cg.path)
}

/// This process's cgroup v2 directory (`0::` of `/proc/self/cgroup` under the unified mount).
fn own_cgroup() -> Option<PathBuf> {
    let cgroup = fs::read_to_string("/proc/self/cgroup").ok()?;
    let relative = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mount = unified_mount()?;
    Some(match relative.trim_start_matches('/') {
        "" => mount,
        relative => mount.join(relative),
    })
}

/// The directory of the cgroup v2 this process is in, when the unified hierarchy is mounted and that
/// directory is writable.
fn own_cgroup_dir() -> Option<PathBuf> {
    let dir = own_cgroup()?;
    let writable = nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK).is_ok();
    writable.then_some(dir)
}

/// Whether a job tree can get a cgroup v2 of its own (so that the whole tree is stopped at once).
#[derive(Debug, Clone, Serialize)]
pub struct CgroupProbe {
    /// The unified (v2) hierarchy's mount point, from `/proc/self/mountinfo`.
    pub mount: Option<PathBuf>,
    /// This process's cgroup v2 directory (`0::` of `/proc/self/cgroup`).
    pub path: Option<PathBuf>,
    /// Whether isolate may create a child cgroup there.
    pub writable: bool,
}

/// What `doctor` reports of cgroups; read-only.
pub fn probe() -> CgroupProbe {
    let path = own_cgroup();
    let writable = path.as_ref().is_some_and(|p| {
        p.join("cgroup.procs").is_file()
            && nix::unistd::access(p, nix::unistd::AccessFlags::W_OK).is_ok()
    });
    CgroupProbe {
        mount: unified_mount(),
        path,
        writable,
    }
}

/// The mount point of the cgroup v2 (unified) hierarchy, from `/proc/self/mountinfo`.
pub fn unified_mount() -> Option<PathBuf> {
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let fstype = right.split_whitespace().next()?;
        let mount_point = left.split_whitespace().nth(4)?;
        (fstype == "cgroup2").then(|| PathBuf::from(unescape(mount_point)))
    })
}

/// mountinfo escapes space, tab, newline and backslash as octal.
fn unescape(field: &str) -> String {
    field
        .replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}
