//! The block arithmetic at the top of the port range, and takers racing for stale locks.

use std::collections::HashSet;
use std::net::{Ipv4Addr, Ipv6Addr, TcpListener};

use super::*;

#[test]
fn a_range_ending_at_65535_checks_its_last_port() {
    assert_eq!(ports_from(65526), (65526..=65535).collect::<Vec<u16>>());
    let state = tempfile::tempdir().unwrap();
    // The only block of the range holds a busy port, its last: no block is free.
    let Ok(_busy) = TcpListener::bind((Ipv4Addr::UNSPECIFIED, 65535)) else {
        return; // something else holds 65535: the block is busy all the same
    };
    let got = reserve_in(state.path(), "job-0001", (65526, 65535));
    assert!(matches!(got, Err(Error::NoFreePorts { .. })), "{got:?}");
}

/// A server on `[::1]` only (IPv6 alone, as a dev server that binds `localhost` that way) holds
/// its port as much as one on IPv4: a block holding it is not drawn.
#[test]
fn a_port_an_ipv6_only_server_holds_is_not_free() {
    use std::os::fd::FromRawFd;
    // SAFETY: a fresh descriptor, owned by the listener from here on; setsockopt reads one int.
    let v6only = unsafe {
        let fd = libc::socket(libc::AF_INET6, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0);
        let one: libc::c_int = 1;
        let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        let opt = (&one as *const libc::c_int).cast();
        assert_eq!(
            libc::setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, opt, len),
            0
        );
        TcpListener::from_raw_fd(fd)
    };
    // SAFETY: a zeroed sockaddr_in6 given its family and the loopback address; bind reads it.
    let bound = unsafe {
        let mut addr: libc::sockaddr_in6 = std::mem::zeroed();
        addr.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        addr.sin6_addr.s6_addr = Ipv6Addr::LOCALHOST.octets();
        let len = std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t;
        let fd = std::os::fd::AsRawFd::as_raw_fd(&v6only);
        libc::bind(fd, (&addr as *const libc::sockaddr_in6).cast(), len) == 0
            && libc::listen(fd, 1) == 0
    };
    if !bound {
        return; // no IPv6 loopback here: no such server either
    }
    let port = v6only.local_addr().unwrap().port();
    // Nothing on IPv4 holds it: the v4 check alone would call it free.
    assert!(TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok());
    assert!(!port_free(port));
}

/// Rounds of eight jobs drawing blocks at once from locks left stale by ended jobs: never two jobs
/// on one block.
#[test]
fn takers_racing_for_stale_locks_never_share_a_block() {
    let state = tempfile::tempdir().unwrap();
    let ports = state.path().join("ports");
    fs::create_dir_all(&ports).unwrap();
    for round in 0..200 {
        // Locks of jobs that ended (no job directory): stale, each one taken over.
        for first in (40000..40080).step_by(10) {
            fs::write(ports.join(first.to_string()), format!("gone-{round:04}")).unwrap();
        }
        let ids: Vec<String> = (0..8).map(|i| format!("job{round}-{i:04x}")).collect();
        for id in &ids {
            fs::create_dir_all(store::jobs_dir(state.path()).join(id)).unwrap();
        }
        let taken: Vec<u16> = std::thread::scope(|s| {
            let handles: Vec<_> = ids
                .iter()
                .map(|id| s.spawn(|| reserve_in(state.path(), id, (40000, 40079))))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap().map(|b| b.first).unwrap_or(0))
                .collect()
        });
        let distinct: HashSet<u16> = taken.iter().copied().filter(|&f| f != 0).collect();
        assert_eq!(
            distinct.len(),
            taken.iter().filter(|&&f| f != 0).count(),
            "round {round}: {taken:?}"
        );
        for id in &ids {
            fs::remove_dir_all(store::jobs_dir(state.path()).join(id)).unwrap();
        }
    }
}

/// A lock that is not a regular file (a directory, a FIFO or a link another process of the user's
/// left in `ports/`) is a block not to take, never the end of the draw: every job whose draw met
/// it failed to start (a directory) or hung holding `ports/.take` (a link to a FIFO).
#[test]
fn a_lock_that_is_not_a_regular_file_is_skipped() {
    let state = tempfile::tempdir().unwrap();
    let ports = state.path().join("ports");
    fs::create_dir_all(ports.join("40100")).unwrap();
    for id in ["a-0001", "a-0002", "b-0003", "b-0004"] {
        let got = reserve_in(state.path(), id, (40100, 40119));
        let block = got.unwrap_or_else(|e| panic!("{id}: {e:?}"));
        assert_eq!(block.first, 40110, "{id}");
        block.release();
    }
    assert!(ports.join("40100").is_dir());
}

/// What a crash can leave of a lock written without fsync (`atomic::replace`): an empty file.
/// Its block is free, so the lock needs no fsync (a lock naming a job that ended is the racing
/// test's).
#[test]
fn a_lock_a_crash_left_empty_is_taken() {
    let state = tempfile::tempdir().unwrap();
    let ports = state.path().join("ports");
    fs::create_dir_all(&ports).unwrap();
    fs::write(ports.join("40200"), "").unwrap();
    let got = reserve_in(state.path(), "c-0001", (40200, 40209)).unwrap();
    assert_eq!(got.first, 40200);
    assert_eq!(fs::read_to_string(ports.join("40200")).unwrap(), "c-0001");
    got.release();
}
