//! bind(2)'s one check: an abstract unix name of the job's choosing is refused where the policy
//! scopes abstract sockets (the default). Such a name has no owner: an outside process that
//! connects to a well-known one (`@/tmp/.X11-unix/X0`, a daemon's) would reach the job's server,
//! which Landlock's abstract scope does not stop (it refuses the job's connects out, not others'
//! in). The kernel's own name (autobind) is not refused: nobody outside can know it in advance.
//!
//! Every other bind is the kernel's to make and judge (`CONTINUE`), under the caller's whole
//! Landlock domain: the job's layers, a narrowing policy's (`--resume --policy`), a nested job's,
//! the job's own. The broker could not make them itself without skipping the layers it does not
//! hold. The price: the kernel reads the address again, so a second thread of the job that swaps
//! an abstract name in after the check binds it (SECURITY.md, "Tenth look").

use crate::sandbox::notify::Answer;

/// `sizeof(sa_family_t)`: an `AF_UNIX` address this long asks the kernel for a name of its own
/// choosing (autobind).
const FAMILY: usize = 2;

/// The answer to a `bind` of a socket of `family` to `addr`, read once.
pub(super) fn bind(family: i32, addr: &[u8], scoped: bool) -> Answer {
    let abstract_name = addr.len() > FAMILY && addr[FAMILY] == 0;
    match family == libc::AF_UNIX && abstract_name && scoped {
        true => Answer::Errno(libc::EACCES),
        false => Answer::Continue,
    }
}
