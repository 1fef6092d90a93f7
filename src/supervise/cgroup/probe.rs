//! What `doctor` reports of cgroups ([`CgroupProbe`]): the unified mount, this process's cgroup,
//! and whether isolate may create a job's cgroup there. Read-only.

use std::path::PathBuf;

use serde::Serialize;

use super::place::{own_cgroup, unified_mount};

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
