//! The namespaces tier: where the kernel lets an unprivileged user make a user namespace, the job
//! gets, beside Landlock and the seccomp layer, namespaces of its own that take the place of
//! refusals. Its own IPC namespace (System V IPC and POSIX message queues work and are private),
//! its own mount namespace with a private tmpfs on `/dev/shm` (POSIX shared memory and semaphores
//! work and are private) and the overlays of its caches, and, for a policy that restricts the
//! network, its own network namespace with only loopback: its servers on any port and address
//! reach nobody else, and the proxy is reached through a socket isolate serves inside.
//!
//! The user and network namespaces are made by a process of the supervisor's (`supervise::
//! namespaces::Holder`) before the job is forked, so that the proxy's listener and the sockets the
//! supervisor makes for the job exist before the job does; the job's first process joins them,
//! then makes its mount and IPC namespaces itself ([`enter`]), before Landlock. The user namespace
//! maps the user's own uid and gid onto themselves: the job's files and identity are the user's.
//! Every capability the namespace gives is dropped before CMD runs, and the seccomp filter refuses
//! the job any namespace of its own.
//!
//! Where a user namespace cannot be made (a container, AppArmor's restriction, a job inside
//! another job) the job runs in the Landlock-only tier: today's refusals, listed among the gaps.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::config::TierSetting;
pub use crate::job::record::Tier;

/// The variable that forces a tier: `landlock` (the Landlock-only tier) or `namespaces` (fails
/// where namespaces cannot be made).
pub const TIER_VAR: &str = "ISOLATE_TIER";

/// The namespaces the job's first process enters before Landlock, as the plan gives them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Namespaces {
    /// The process holding the job's user (and network) namespace (its pid, for the sentinel).
    pub holder: i32,
    /// The descriptor of the holder's user namespace, inherited: the job joins it.
    pub user_fd: i32,
    /// The descriptor of the holder's network namespace, when the job joins that too (a policy
    /// that restricts the network).
    pub net_fd: Option<i32>,
    /// A private tmpfs mounted on this directory (the canonical `/dev/shm`).
    pub shm: Option<PathBuf>,
    /// Overlays mounted on the job's caches (sandbox/caches.rs).
    #[serde(default)]
    pub overlays: Vec<Overlay>,
    /// Credential stores beneath an overlay, hidden by a mount over each: an empty directory
    /// nobody may read, or `/dev/null` for a file.
    #[serde(default)]
    pub hidden: Vec<PathBuf>,
}

/// One overlay: `lower` directories (the first on top) read through `target`, written to `upper`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlay {
    pub target: PathBuf,
    pub lower: Vec<PathBuf>,
    pub upper: PathBuf,
    pub work: PathBuf,
}

/// Joins the holder's namespaces and makes the job's mount and IPC namespaces, then mounts what
/// `ns` names. In the job's first process, single-threaded, before Landlock (which refuses every
/// mount once in force).
pub fn enter(ns: &Namespaces) -> std::io::Result<()> {
    let join = |kind: &str, fd: i32, flag: libc::c_int| -> std::io::Result<()> {
        // SAFETY: setns on a descriptor the supervisor passed (its holder's namespace); the kernel
        // checks the rest. Closed after: nothing of the job keeps it.
        let rc = unsafe { libc::setns(fd, flag) };
        let joined = match rc {
            0 => Ok(()),
            _ => Err(context(format!("cannot join the job's {kind} namespace"))),
        };
        // SAFETY: closing the inherited descriptor, used once.
        unsafe { libc::close(fd) };
        joined
    };
    join("user", ns.user_fd, libc::CLONE_NEWUSER)?;
    if let Some(fd) = ns.net_fd {
        join("network", fd, libc::CLONE_NEWNET)?;
    }
    // SAFETY: unshare with flags only.
    if unsafe { libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWIPC) } != 0 {
        return Err(context(
            "cannot make the job's mount and IPC namespaces".into(),
        ));
    }
    // Nothing mounted here propagates back to the user's namespace.
    mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    )?;
    if let Some(shm) = &ns.shm {
        let flags = libc::MS_NOSUID | libc::MS_NODEV;
        mount(Some("tmpfs"), shm, Some("tmpfs"), flags, Some("mode=1777"))?;
    }
    for overlay in &ns.overlays {
        let lower: Vec<String> = overlay.lower.iter().map(|p| escaped(p)).collect();
        let options = format!(
            "lowerdir={},upperdir={},workdir={},userxattr",
            lower.join(":"),
            escaped(&overlay.upper),
            escaped(&overlay.work)
        );
        mount(
            Some("overlay"),
            &overlay.target,
            Some("overlay"),
            0,
            Some(&options),
        )?;
    }
    for store in &ns.hidden {
        // Opened without following any link on the way (a layer of the project's jobs' cache may
        // hold one): a store behind a link is not where the overlay shows it, and a link itself
        // cannot be mounted over; the mount goes onto the very inode opened.
        let Some(fd) = open_no_links(store)? else {
            continue;
        };
        let place = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        let meta = std::fs::metadata(&place)?;
        if meta.is_dir() {
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
            mount(
                Some("tmpfs"),
                &place,
                Some("tmpfs"),
                flags,
                Some("mode=000,size=4k"),
            )?;
        } else {
            mount(Some("/dev/null"), &place, None, libc::MS_BIND, None)?;
        }
    }
    Ok(())
}

/// `path` opened as a path descriptor without following a link anywhere on it (`openat2` with
/// `RESOLVE_NO_SYMLINKS`); `None` when it is not there or a link is on the way.
fn open_no_links(path: &Path) -> std::io::Result<Option<OwnedFd>> {
    /// `struct open_how` (include/uapi/linux/openat2.h).
    #[repr(C)]
    struct OpenHow {
        flags: u64,
        mode: u64,
        resolve: u64,
    }
    const RESOLVE_NO_SYMLINKS: u64 = 0x04;
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS,
    };
    // SAFETY: openat2 reads the NUL-terminated path and the struct of the size given, both alive
    // across the call; it returns a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ELOOP) | Some(libc::ENOTDIR) => Ok(None),
            _ => Err(std::io::Error::new(
                e.kind(),
                format!("cannot open {}: {e}", path.display()),
            )),
        };
    }
    // SAFETY: a new descriptor nothing else owns.
    Ok(Some(unsafe { OwnedFd::from_raw_fd(fd as i32) }))
}

/// A path as overlayfs reads it in its options: `,` and `:` separate, `\` escapes.
fn escaped(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | ',' | ':') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> std::io::Result<()> {
    let c = |s: &str| CString::new(s).map_err(std::io::Error::other);
    let source = source.map(c).transpose()?;
    let fstype = fstype.map(c).transpose()?;
    let data = data.map(c).transpose()?;
    let target_c = c(&target.to_string_lossy())?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is a NUL-terminated string that outlives the call, or null.
    let rc = unsafe {
        libc::mount(
            ptr(&source),
            target_c.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    };
    if rc != 0 {
        return Err(context(format!("cannot mount on {}", target.display())));
    }
    Ok(())
}

/// The last OS error, with what was being done.
fn context(what: String) -> std::io::Error {
    let e = std::io::Error::last_os_error();
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Whether this user can make the namespaces of the namespaces tier here: a child made in a new
/// user, network, mount and IPC namespace, which exits at once. `Err` says what the kernel answered.
pub fn probe() -> Result<(), String> {
    let flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
    // SAFETY: a clone without a new stack is a fork whose child only calls _exit.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    match pid {
        // SAFETY: the child ends at once, running nothing of the parent's.
        0 => unsafe { libc::_exit(0) },
        -1 => Err(format!(
            "this user cannot make a user namespace here: {}",
            std::io::Error::last_os_error()
        )),
        pid => {
            // SAFETY: waitpid of the child just made.
            unsafe { libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0) };
            Ok(())
        }
    }
}
