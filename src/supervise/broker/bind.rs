//! bind(2)'s one check: an abstract unix name of the job's choosing is refused where the policy
//! scopes abstract sockets (the default). Such a name has no owner: an outside process that
//! connects to a well-known one (`@/tmp/.X11-unix/X0`, a daemon's) would reach the job's server,
//! which Landlock's abstract scope does not stop (it refuses the job's connects out, not others'
//! in). The kernel's own name (autobind) is not refused: nobody outside can know it in advance.
//!
//! Every other bind is the kernel's to make and judge (`CONTINUE`), under the caller's whole
//! Landlock domain: the job's layers, a narrowing policy's (`--resume --policy`), a nested job's,
//! the job's own. The broker could not make them itself without skipping the layers it does not
//! hold. The kernel then reads the address again, so a second thread of the job can swap an
//! abstract name in after the check: such a socket is refused at `listen` (inet/listen.rs), on the
//! name the kernel holds, which nothing changes after; a datagram socket, which serves without
//! listening, exists only where the policy allows unix datagrams (SECURITY.md, "Tenth look").

use super::unix::SUN_PATH;
use crate::sandbox::notify::Answer;

/// Whether `addr` (a unix socket's, as `getsockname` gives it) is an abstract name the kernel did
/// not choose: the kernel's own are a NUL and five lowercase hex digits.
pub(super) fn chosen_abstract(addr: &[u8]) -> bool {
    let name = match addr.get(SUN_PATH..) {
        Some([0, name @ ..]) => name,
        _ => return false,
    };
    let autobound = name.len() == 5 && name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    !autobound
}

/// The answer to a `bind` of a socket of `family` to `addr`, read once.
pub(super) fn bind(family: i32, addr: &[u8], scoped: bool) -> Answer {
    // An address no longer than its family asks the kernel for a name of its own (autobind).
    // An address the kernel refuses with EINVAL (another family's, longer than a sockaddr_un) is
    // the kernel's to refuse.
    let unix_address = addr.get(..SUN_PATH) == Some(&(libc::AF_UNIX as u16).to_ne_bytes()[..])
        && addr.len() <= std::mem::size_of::<libc::sockaddr_un>();
    let abstract_name = unix_address && addr.len() > SUN_PATH && addr[SUN_PATH] == 0;
    match family == libc::AF_UNIX && abstract_name && scoped {
        true => Answer::Errno(libc::EACCES),
        false => Answer::Continue,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(name: &[u8]) -> Vec<u8> {
        let mut addr = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        addr.extend_from_slice(name);
        addr
    }

    #[test]
    fn an_abstract_name_is_refused_and_the_kernels_own_and_paths_are_not() {
        let unix_bind = |name: &[u8], scoped| bind(libc::AF_UNIX, &unix(name), scoped);
        assert_eq!(
            unix_bind(b"\0/tmp/.X11-unix/X0", true),
            Answer::Errno(libc::EACCES)
        );
        assert_eq!(
            unix_bind(b"\0", true),
            Answer::Errno(libc::EACCES),
            "an empty name"
        );
        assert_eq!(unix_bind(b"", true), Answer::Continue, "autobind");
        assert_eq!(unix_bind(b"a.sock\0", true), Answer::Continue);
        assert_eq!(unix_bind(b"\0x", false), Answer::Continue, "unscoped");
        assert_eq!(
            bind(libc::AF_INET, &[2, 0, 0, 0, 0], true),
            Answer::Continue
        );
        // What the kernel refuses with EINVAL is left to it: another family's address, one
        // longer than a sockaddr_un.
        let mut inet = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        inet.extend([0u8; 14]);
        assert_eq!(bind(libc::AF_UNIX, &inet, true), Answer::Continue);
        let mut long = unix(b"\0");
        long.resize(128, 0);
        assert_eq!(bind(libc::AF_UNIX, &long, true), Answer::Continue);
        // On listen, the name the kernel holds: its own (five hex digits) is not a chosen one.
        assert!(!chosen_abstract(&unix(b"\x000a1f3")));
        assert!(chosen_abstract(&unix(b"\0/tmp/.X11-unix/X0")));
        assert!(
            chosen_abstract(&unix(b"\0ABCDE")),
            "upper case is not the kernel's"
        );
        assert!(!chosen_abstract(&unix(b"/tmp/a.sock")));
        assert!(!chosen_abstract(&unix(b"")), "unbound");
    }
}
