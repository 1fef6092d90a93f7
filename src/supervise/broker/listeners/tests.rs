//! sock_diag against real sockets: one bound to a file, one with an abstract name.

use super::*;
use std::os::fd::OwnedFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{SocketAddr, UnixListener};

/// The kernel's encoding of a device number (`MAJOR << 20 | MINOR`), as sock_diag reports it,
/// from the one `stat(2)` gives.
pub fn kernel_dev(st_dev: u64) -> u32 {
    let major = libc::major(st_dev);
    let minor = libc::minor(st_dev);
    (major << 20) | (minor & 0xfffff)
}

#[test]
fn a_bound_socket_is_found_by_its_file_and_by_its_abstract_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let _listener = UnixListener::bind(&path).unwrap();
    let meta = std::fs::metadata(&path).unwrap();
    let file = (kernel_dev(meta.dev()), meta.ino() as u32);
    let opened: OwnedFd = std::fs::File::open(dir.path())
        .map(|_| {
            nix::fcntl::open(
                &path,
                nix::fcntl::OFlag::O_PATH,
                nix::sys::stat::Mode::empty(),
            )
            .unwrap()
        })
        .unwrap();
    assert_eq!(identity(&opened, None).unwrap(), file);
    let name = format!("isolate-diag-test-{}", std::process::id());
    let _abstract =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    let all = bound().unwrap();
    assert!(
        all.iter().any(|b| b.file == Some(file) && b.serves()),
        "{all:?}"
    );
    assert!(all
        .iter()
        .any(|b| b.abstract_name.as_deref() == Some(name.as_bytes())));
}
