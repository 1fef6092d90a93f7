//! What the running kernel enforces: the Landlock ABI version, and the gaps that follow from it.

/// The lowest ABI that contains writes: `truncate(2)` outside the worktree is controlled from ABI 3.
pub const MIN_ABI: u32 = 3;
/// Signal and abstract-unix-socket scoping arrived with ABI 6.
pub const SCOPES_ABI: u32 = 6;

/// `ISOLATE_LANDLOCK_ABI_MAX=N` makes isolate use at most ABI N, as on an older kernel: it can only
/// take protection away, and the report then shows the lower ABI and its gaps. It exists to try a
/// policy against older kernels (and to test fail-closed behaviour on a machine that has Landlock).
pub const ABI_MAX_VAR: &str = "ISOLATE_LANDLOCK_ABI_MAX";

/// The kernel's Landlock ABI (capped by `ISOLATE_LANDLOCK_ABI_MAX`), `None` without Landlock.
pub fn landlock_abi() -> Option<u32> {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute and size 0 only queries the ABI.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    let cap = std::env::var(ABI_MAX_VAR)
        .ok()
        .and_then(|v| v.parse::<u32>().ok());
    let abi = u32::try_from(abi).ok().filter(|&v| v > 0)?;
    let abi = cap.map_or(abi, |c| abi.min(c));
    (abi > 0).then_some(abi)
}
