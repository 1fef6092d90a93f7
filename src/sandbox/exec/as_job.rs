//! A thread of isolate's restricted as the job is: a working directory and umask of its own, no
//! capability, `no_new_privs`, and the job's Landlock ruleset. What it does for the job (a bind
//! the broker makes) the kernel then judges as it would the job's own call.

use crate::error::{Error, Result};
use crate::sandbox::landlock;
use crate::sandbox::plan::Rules;

use super::restrict::drop_capabilities;

/// Restricts the calling thread, for good, as the job under `rules` is.
pub fn restrict_thread_as_job(rules: &Rules) -> Result<()> {
    // SAFETY: unshare of the calling thread's filesystem attributes (root, cwd, umask) only.
    if unsafe { libc::unshare(libc::CLONE_FS) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::System(
            "cannot unshare a thread's working directory",
            e,
        ));
    }
    drop_capabilities().map_err(|e| Error::System("cannot drop a thread's capabilities", e))?;
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::System("cannot set no_new_privs on a thread", e));
    }
    landlock::restrict_self(rules)?;
    Ok(())
}
