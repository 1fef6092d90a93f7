//! Where cgroups are: the unified (v2) hierarchy's mount point, and the cgroup directory a process
//! is in, read from `/proc`. It only reads; nothing here creates or kills.

use std::fs;
use std::path::PathBuf;
use std::sync::OnceLock;

/// This process's cgroup v2 directory (`0::` of `/proc/self/cgroup` under the unified mount).
pub(super) fn own_cgroup() -> Option<PathBuf> {
    of("self")
}

/// The cgroup v2 directory of `/proc/<process>` (`0::` of its `cgroup` under the unified mount).
pub(super) fn of(process: &str) -> Option<PathBuf> {
    let cgroup = fs::read_to_string(format!("/proc/{process}/cgroup")).ok()?;
    let relative = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mount = unified_mount()?;
    Some(match relative.trim_start_matches('/') {
        "" => mount,
        relative => mount.join(relative),
    })
}

/// The directory of the cgroup v2 this process is in, when the unified hierarchy is mounted and that
/// directory is writable.
pub(super) fn own_cgroup_dir() -> Option<PathBuf> {
    let dir = own_cgroup()?;
    let writable = nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK).is_ok();
    writable.then_some(dir)
}

/// The mount point of the cgroup v2 (unified) hierarchy, from `/proc/self/mountinfo`, read once
/// per process (a run asks three times, and the kernel writes every mount out each time; isolate
/// never changes its mount namespace).
pub fn unified_mount() -> Option<PathBuf> {
    static MOUNT: OnceLock<Option<PathBuf>> = OnceLock::new();
    MOUNT.get_or_init(read_unified_mount).clone()
}

fn read_unified_mount() -> Option<PathBuf> {
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
