//! Forking straight into a cgroup: `clone3` with `CLONE_INTO_CGROUP` (Linux 5.7), which places the
//! child in the cgroup as the kernel creates it. Writing the child's pid to `cgroup.procs` instead
//! takes the cgroup threadgroup lock for writing, which waits for an RCU grace period unless one
//! just passed: 5-15 ms in a fifth to a half of all starts on the machine bench/launch.sh ran on.
//! The fork takes the same lock for reading only. Nothing here knows what a job is.

use std::io;
use std::os::fd::RawFd;

/// `CLONE_INTO_CGROUP` (include/uapi/linux/sched.h), not in the libc crate for every target.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `struct clone_args` of Linux 5.7 (`CLONE_ARGS_SIZE_VER2`, 88 bytes), include/uapi/linux/sched.h.
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Where the child was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed {
    /// In the cgroup asked for, from its first instruction.
    InCgroup,
    /// In this process's own cgroup: no cgroup was asked for, or this kernel cannot place a child
    /// at fork (before 5.7); the child must move itself.
    Here,
}

/// Forks this process like `fork(2)` (a copy of the calling thread, `SIGCHLD` to the parent at
/// its end), into the cgroup whose directory `cgroup` is open, when given and the kernel can.
/// Returns 0 in the child and the child's pid in the parent, with where the child was made.
///
/// # Safety
///
/// As for `fork(2)` in a process with threads, and more: glibc's fork handlers do not run, so the
/// child must make only async-signal-safe calls (no allocation, no lock) and end in `execve` or
/// `_exit`.
pub unsafe fn fork_into(cgroup: Option<RawFd>) -> io::Result<(libc::pid_t, Placed)> {
    if let Some(fd) = cgroup.and_then(|fd| u64::try_from(fd).ok()) {
        let args = CloneArgs {
            flags: CLONE_INTO_CGROUP,
            exit_signal: libc::SIGCHLD as u64,
            cgroup: fd,
            ..CloneArgs::default()
        };
        // SAFETY: the caller keeps to the child's rules above; `args` lives across the call and
        // its size is passed with it. Without CLONE_VM the child runs on a copy of this stack.
        let pid = libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            std::mem::size_of::<CloneArgs>(),
        );
        if pid >= 0 {
            return Ok((pid as libc::pid_t, Placed::InCgroup));
        }
        // ENOSYS: no clone3 (before 5.3); E2BIG or EINVAL: no CLONE_INTO_CGROUP (before 5.7);
        // EBUSY, EOPNOTSUPP and the like: a cgroup that cannot take the child this way. Each
        // falls back to the plain fork, where the child moves itself and a cgroup that refuses it
        // leaves the descendant walk, as before; a fork that cannot be made fails there again.
    }
    // SAFETY: as above; glibc's fork runs its handlers, which the child does not rely on either.
    match libc::fork() {
        -1 => Err(io::Error::last_os_error()),
        pid => Ok((pid, Placed::Here)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::path::PathBuf;

    /// This process's cgroup v2 directory, when it may create a child cgroup there.
    fn own_cgroup() -> Option<PathBuf> {
        let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let relative = text.lines().find_map(|l| l.strip_prefix("0::"))?;
        // The unified hierarchy's mount point (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a
        // hybrid system).
        let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let mount = info.lines().find_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            (right.split_whitespace().next()? == "cgroup2")
                .then(|| left.split_whitespace().nth(4).map(PathBuf::from))?
        })?;
        let dir = mount.join(relative.trim_start_matches('/'));
        nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK)
            .is_ok()
            .then_some(dir)
    }

    #[test]
    fn the_child_is_in_the_cgroup_from_the_fork_on() {
        let Some(own) = own_cgroup() else {
            assert!(
                std::env::var_os("ISOLATE_TEST_NO_CGROUP").is_some(),
                "no writable cgroup v2 directory; set ISOLATE_TEST_NO_CGROUP=1 on a machine without"
            );
            return;
        };
        let dir = own.join(format!("isolate-test-clone-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        let handle = std::fs::File::open(&dir).unwrap();
        let (hold_read, hold_write) = crate::sys::pipe::pipe().unwrap();
        let (hold, release) = (hold_read.as_raw_fd(), hold_write.as_raw_fd());
        // SAFETY: the child only reads from a pipe and calls _exit.
        let forked = unsafe { fork_into(Some(handle.as_raw_fd())) };
        let Ok((pid, placed)) = forked else {
            let _ = std::fs::remove_dir(&dir);
            panic!("fork_into failed: {forked:?}");
        };
        if pid == 0 {
            let mut byte = 0u8;
            // SAFETY: close, read into a byte on the stack, then _exit: async-signal-safe. The
            // child's copy of the write end is closed first, or the read would never end.
            unsafe {
                libc::close(release);
                libc::read(hold, (&mut byte as *mut u8).cast(), 1);
                libc::_exit(0);
            }
        }
        // Read while the child is held: it has run nothing that could move it.
        let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        let mine = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        drop(hold_write);
        let mut status = 0;
        // SAFETY: waitpid of our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let _ = std::fs::remove_dir(&dir);
        assert_eq!(placed, Placed::InCgroup);
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(cgroup.trim_end().ends_with(&name), "{cgroup}");
        assert!(!mine.contains(&name), "{mine}");
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}
