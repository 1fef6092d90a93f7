//! Where cgroups are: the unified (v2) hierarchy's mount point, and the cgroup directory a process
//! is in, read from `/proc`. It only reads; nothing here creates or kills.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::sys::statfs;

/// This process's cgroup v2 directory (`0::` of `/proc/self/cgroup` under the unified mount).
pub(super) fn own_cgroup() -> Option<PathBuf> {
    of("self")
}

/// The cgroup v2 directory of `/proc/<process>` (`0::` of its `cgroup` under the unified mount).
pub(super) fn of(process: &str) -> Option<PathBuf> {
    let dir = match process.parse::<i32>() {
        Ok(pid) => crate::sys::proc_view::dir(pid),
        Err(_) => std::path::PathBuf::from(format!("/proc/{process}")),
    };
    let cgroup = fs::read_to_string(dir.join("cgroup")).ok()?;
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

/// The mount point of the cgroup v2 (unified) hierarchy, where systemd mounts it or else from
/// `/proc/self/mountinfo`, found once per process (a run asks three times, and the kernel writes every mount out each time; isolate
/// never changes its mount namespace).
pub fn unified_mount() -> Option<PathBuf> {
    static MOUNT: OnceLock<Option<PathBuf>> = OnceLock::new();
    MOUNT.get_or_init(read_unified_mount).clone()
}

fn read_unified_mount() -> Option<PathBuf> {
    known_unified_mount().or_else(listed_unified_mount)
}

/// Where systemd mounts the unified hierarchy (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a
/// hybrid system), when it is there: a mount point (another device than its parent's) of a cgroup2
/// filesystem. Three small calls instead of the kernel writing out every mount.
fn known_unified_mount() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .into_iter()
        .map(Path::new)
        .find(|path| {
            let cgroup2 = statfs::statfs(*path)
                .is_ok_and(|s| s.filesystem_type() == statfs::CGROUP2_SUPER_MAGIC);
            let device = |p: &Path| fs::metadata(p).map(|m| m.dev()).ok();
            cgroup2 && path.parent().and_then(device) != device(path)
        })
        .map(Path::to_path_buf)
}

/// The first cgroup2 mount in `/proc/self/mountinfo`.
fn listed_unified_mount() -> Option<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The mount found where systemd puts it is the one the mount table lists (on this machine
    /// hybrid's `/sys/fs/cgroup/unified`, not the tmpfs `/sys/fs/cgroup` above it).
    #[test]
    fn the_known_place_of_the_unified_mount_is_the_listed_one() {
        assert_eq!(known_unified_mount(), listed_unified_mount());
    }
}
