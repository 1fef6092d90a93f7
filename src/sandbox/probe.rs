//! What this machine offers the sandbox: the kernel's Landlock ABI (and why there is none), and
//! the seccomp layer's calls. Read-only: probing never changes anything.

/// The lowest ABI that contains writes: `truncate(2)` outside the worktree is controlled from ABI 3.
pub const MIN_ABI: u32 = 3;
/// TCP bind and connect rules arrived with ABI 4.
pub const NETWORK_ABI: u32 = 4;
/// Device ioctl restriction arrived with ABI 5.
pub const IOCTL_ABI: u32 = 5;
/// Signal and abstract-unix-socket scoping arrived with ABI 6.
pub const SCOPES_ABI: u32 = 6;

/// `ISOLATE_LANDLOCK_ABI_MAX=N` makes isolate use at most ABI N, as on an older kernel: it can only
/// take protection away, and the report then shows the lower ABI and its gaps. It exists to try a
/// policy against older kernels (and to test fail-closed behaviour on a machine that has Landlock).
pub const ABI_MAX_VAR: &str = "ISOLATE_LANDLOCK_ABI_MAX";

/// The kernel's own Landlock ABI, or why it has none.
pub fn kernel_abi() -> Result<u32, &'static str> {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute and size 0 only queries the ABI.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if abi > 0 {
        return u32::try_from(abi).map_err(|_| "unexpected answer from the kernel");
    }
    // landlock_create_ruleset(2): EOPNOTSUPP when built in but not enabled at boot.
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => Err("Landlock is built into this kernel but not enabled at boot (add landlock to the lsm= boot parameter)"),
        Some(libc::ENOSYS) => Err("this kernel has no Landlock (Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK)"),
        _ => Err("Landlock is not available"),
    }
}

/// The sandboxed runtime isolate runs in, when it is one known to lack what isolate needs: gVisor
/// (`runsc`), which implements neither Landlock nor seccomp user notification, and reports the
/// same kernel release and version in every release.
pub fn runtime() -> Option<&'static str> {
    let version = std::fs::read_to_string("/proc/version").ok()?;
    let gvisor = version.contains("Linux version 4.4.0")
        && version.contains("#1 SMP Sun Jan 10 15:06:54 PST 2016");
    gvisor.then_some("gVisor (runsc)")
}

/// What to do where the sandbox cannot exist, naming the runtime when it is a known one.
pub fn remedy() -> String {
    match runtime() {
        Some(runtime) => format!(
            "isolate runs in {runtime}, which implements neither Landlock nor seccomp user \
             notification: run it under runc (a runc runtime class, `runtimeClassName: runc`)"
        ),
        None => "use a kernel with Landlock (Linux 6.2+, `landlock` in `lsm=`) and seccomp user \
                 notification (5.6+), or, in a container sandbox that lacks them, a runc runtime"
            .to_string(),
    }
}

/// `ISOLATE_LANDLOCK_ABI_MAX`, when set to a number.
pub fn abi_cap() -> Option<u32> {
    std::env::var(ABI_MAX_VAR).ok()?.parse().ok()
}

/// The ABI isolate uses: the kernel's, capped by `ISOLATE_LANDLOCK_ABI_MAX`; `None` without Landlock.
pub fn landlock_abi() -> Option<u32> {
    let abi = kernel_abi().ok()?;
    let abi = abi_cap().map_or(abi, |c| abi.min(c));
    (abi > 0).then_some(abi)
}

/// `ISOLATE_NO_SECCOMP=1` makes isolate act as on a kernel without the seccomp layer's parts (it
/// can only take protection away): a policy that requires the layer then fails closed, one that
/// makes it best effort runs with the gap listed.
pub const NO_SECCOMP_VAR: &str = "ISOLATE_NO_SECCOMP";

/// `ISOLATE_NO_SECCOMP` is set (to anything but `0`).
pub fn seccomp_disabled() -> bool {
    std::env::var_os(NO_SECCOMP_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether the seccomp layer can be built here: a seccomp filter may hand calls to a supervisor
/// (`SECCOMP_RET_USER_NOTIF`, Linux 5.0) and the supervisor may take the job's socket to connect it
/// itself (`pidfd_getfd`, Linux 5.6), and isolate is not itself confined in a way that forbids them.
pub fn seccomp() -> Result<(), &'static str> {
    if seccomp_disabled() {
        return Err("ISOLATE_NO_SECCOMP is set");
    }
    let action: u32 = libc::SECCOMP_RET_USER_NOTIF;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL only reads the u32 it is given.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    if rc != 0 {
        return Err(
            "this kernel has no seccomp user notification (Linux 5.0+, CONFIG_SECCOMP_FILTER)",
        );
    }
    // A filter with a listener: on Linux the flag passes and the missing program is EFAULT; a
    // kernel that reports the action but cannot hand out a listener (gVisor) refuses the flag.
    // SAFETY: SECCOMP_SET_MODE_FILTER with a null program installs nothing: it fails on the
    // flag (EINVAL) or on the pointer (EFAULT).
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            std::ptr::null::<libc::c_void>(),
        )
    };
    let errno = std::io::Error::last_os_error().raw_os_error();
    if rc == 0 || errno == Some(libc::EINVAL) {
        return Err(
            "this kernel cannot hand a seccomp filter's notifications to a supervisor \
             (SECCOMP_FILTER_FLAG_NEW_LISTENER refused)",
        );
    }
    // SAFETY: pidfd_getfd on an invalid pidfd only reports an error.
    let rc = unsafe { libc::syscall(libc::SYS_pidfd_getfd, -1, 0, 0) };
    let errno = std::io::Error::last_os_error().raw_os_error();
    if rc >= 0 || errno != Some(libc::EBADF) {
        return Err(
            "this kernel has no pidfd_getfd (Linux 5.6+), or isolate is confined without it",
        );
    }
    Ok(())
}
