//! Filesystems a test mounts in its own directory: a small tmpfs (a full disk), a btrfs image (its
//! ioctls). Mounting needs root, as CI runs; each is unmounted when its guard goes.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use super::TestEnv;

/// A tmpfs of `size` mounted in the test's directory.
pub fn small_tmpfs(env: &TestEnv, size: &str) -> (PathBuf, Unmount) {
    let small = env.path().join("small");
    fs::create_dir_all(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&small)
        .status()
        .unwrap();
    assert!(
        mounted.success(),
        "mounting a tmpfs needs root (CI runs as root)"
    );
    (small.clone(), Unmount(small))
}

/// A btrfs filesystem of 256 MiB in a sparse image in the test's directory, loop-mounted there.
pub fn btrfs_image(env: &TestEnv) -> (PathBuf, Unmount) {
    let image = env.path().join("btrfs.img");
    fs::File::create(&image)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let made = Command::new("mkfs.btrfs")
        .arg("-q")
        .arg(&image)
        .status()
        .expect("mkfs.btrfs (apt-get install btrfs-progs; .ci/run installs it)");
    assert!(made.success(), "mkfs.btrfs failed");
    let mount = env.path().join("btrfs");
    fs::create_dir_all(&mount).unwrap();
    let mounted = Command::new("mount")
        .args(["-o", "loop"])
        .arg(&image)
        .arg(&mount)
        .status()
        .unwrap();
    assert!(
        mounted.success(),
        "mounting a btrfs image needs root and a loop device (CI runs as root)"
    );
    (mount.clone(), Unmount(mount))
}

pub struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}
