//! Whether a seccomp filter over this process already has a notification listener: the kernel
//! refuses a second one in a filter chain (`EBUSY`). Asked in a child, which installs a filter
//! that allows everything and exits: this process's own filters stay as they are.

/// A seccomp filter of this process's chain has a listener (some supervisor answers for it).
pub fn held() -> bool {
    // Built before the fork: the child makes system calls only.
    let allow = [libc::sock_filter {
        code: (libc::BPF_RET | libc::BPF_K) as u16,
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_ALLOW,
    }];
    let prog = libc::sock_fprog {
        len: allow.len() as u16,
        filter: allow.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: the child only calls prctl, seccomp and _exit, which are async-signal-safe, on data
    // made before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            let rc = libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
                &prog as *const libc::sock_fprog,
            );
            let busy = rc < 0 && *libc::__errno_location() == libc::EBUSY;
            libc::_exit(if busy { 1 } else { 0 });
        }
    }
    if pid < 0 {
        return false;
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for the child forked above.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        if rc < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 1
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_process_whose_filters_have_no_listener_is_told_so() {
        // The test process runs under no isolate job: whatever filters it has, none has a listener
        // (a supervisor of a job's own would have started the tests inside the job).
        assert!(!super::held());
    }
}
