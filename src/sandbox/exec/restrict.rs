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
/// removes), every capability the kernel has, not only those this build knows: dropping one not
/// held is no error, and the kernel says EINVAL past its last. Without CAP_SETPCAP the bounding set
/// cannot be changed, and then `no_new_privs` keeps exec from granting anything from it. Then the
/// ambient set, and the other three at once.
pub(super) fn drop_capabilities() -> std::io::Result<()> {
    use caps::{CapSet, Capability};
    if caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP)
        .map_err(std::io::Error::other)?
    {
        for cap in 0.. {
            // SAFETY: prctl with integer arguments only.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) } != 0 {
                match std::io::Error::last_os_error() {
                    e if e.raw_os_error() == Some(libc::EINVAL) && cap > 0 => break,
                    e => return Err(e),
                }
            }
        }
    }
    let clear_all = libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
    // SAFETY: as above.
    if unsafe { libc::prctl(libc::PR_CAP_AMBIENT, clear_all, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // capset(2) with _LINUX_CAPABILITY_VERSION_3: a header and two words of each set, all empty.
    let header: [u32; 2] = [0x2008_0522, 0];
    let data = [0u32; 6];
    // SAFETY: the kernel reads the header and the six words; it writes the header back only for
    // a version it does not know, and both arrays outlive the call.
    if unsafe { libc::syscall(libc::SYS_capset, header.as_ptr(), data.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
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
