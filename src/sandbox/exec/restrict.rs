//! The helper's restrictions besides Landlock and seccomp: resource limits, capabilities, and
//! close-on-exec for every inherited descriptor. Each only takes away; none can grant.

use crate::sandbox::plan::{Limit, Resource};

/// Lowers a resource limit, soft and hard, so that the job cannot raise it again. Never raises the
/// hard limit isolate inherited: a policy can only take resources away.
pub(super) fn set_limit(limit: &Limit) -> std::io::Result<()> {
    let resource = match limit.resource {
        Resource::OpenFiles => libc::RLIMIT_NOFILE,
        Resource::Processes => libc::RLIMIT_NPROC,
        Resource::CoreSize => libc::RLIMIT_CORE,
        Resource::AddressSpace => libc::RLIMIT_AS,
    };
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    if unsafe { libc::getrlimit(resource, &mut current) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let value = (limit.value as libc::rlim_t).min(current.rlim_max);
    let wanted = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: as above.
    if unsafe { libc::setrlimit(resource, &wanted) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Empties every capability set. The bounding set first (it needs CAP_SETPCAP, which the rest
/// removes); without CAP_SETPCAP it cannot be changed, and then `no_new_privs` keeps exec from
/// granting anything from it.
pub(super) fn drop_capabilities() -> Result<(), caps::errors::CapsError> {
    use caps::CapSet;
    if caps::has_cap(None, CapSet::Effective, caps::Capability::CAP_SETPCAP)? {
        caps::clear(None, CapSet::Bounding)?;
    }
    caps::clear(None, CapSet::Ambient)?;
    caps::clear(None, CapSet::Inheritable)?;
    caps::clear(None, CapSet::Effective)?;
    caps::clear(None, CapSet::Permitted)?;
    Ok(())
}

/// `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`: an inherited writable descriptor of a project file
/// would let the job write that file whatever Landlock says.
pub(super) fn close_range_cloexec() -> std::io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range only changes descriptor flags of this process.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
