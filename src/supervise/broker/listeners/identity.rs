//! The identity sock_diag knows a socket file by (its superblock's device and its inode), read for
//! a descriptor the broker holds. It reads `/proc/self`, and the mount table of the caller whose
//! path it opened (a job in a mount namespace of its own opens files on its mounts), never the
//! job's paths.

use std::os::fd::{AsRawFd, OwnedFd};

/// The identity sock_diag gives the socket file `file` is open on: its superblock's device and
/// its inode number, read from `/proc/self/fdinfo` and `/proc/self/mountinfo`. (`stat` gives a
/// btrfs subvolume's device, or an overlay's lower filesystem's, where sock_diag gives the
/// superblock's.)
pub fn identity(file: &OwnedFd, caller: Option<i32>) -> std::io::Result<(u32, u32)> {
    let bad = || std::io::Error::other("unexpected /proc/self/fdinfo or mountinfo");
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", file.as_raw_fd()))?;
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let (mount, ino) = (
        field("mnt_id:").ok_or_else(bad)?,
        field("ino:").ok_or_else(bad)?,
    );
    let device_in = |table: &str| {
        table.lines().find_map(|line| {
            let mut fields = line.split(' ');
            let id: u64 = fields.next()?.parse().ok()?;
            let dev = fields.nth(1)?;
            (id == mount).then(|| dev.to_string())
        })
    };
    let mut dev = device_in(&std::fs::read_to_string("/proc/self/mountinfo")?);
    if let (None, Some(tid)) = (&dev, caller) {
        // Mount ids are unique on the machine: one of the caller's own mounts is in its table.
        let theirs = std::fs::read_to_string(crate::sys::proc_view::dir(tid).join("mountinfo"))?;
        dev = device_in(&theirs);
    }
    let dev = dev.ok_or_else(bad)?;
    let (major, minor) = dev.split_once(':').ok_or_else(bad)?;
    let (major, minor): (u32, u32) = (
        major.parse().map_err(|_| bad())?,
        minor.parse().map_err(|_| bad())?,
    );
    Ok(((major << 20) | (minor & 0xfffff), ino as u32))
}
