//! The parent's side of starting the helper: everything the child needs made before the fork (the
//! helper's argv and environment as C strings, its streams opened), the fork itself, into the
//! job's cgroup where the kernel can (sys::clone), and the wait until the child has exec'd the
//! helper or says why it could not (an errno on a close-on-exec pipe, as std's spawn does).

use std::ffi::{c_char, CString, OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::unistd::Pid;

use super::child::{exec_helper, Setup};
use super::stdio::Stdio;
use crate::supervise::cgroup::ForChild;
use crate::sys::clone::{fork_into, Placed};
use crate::sys::pipe;

/// What the helper is started with.
pub(super) struct Helper<'a> {
    pub program: &'a Path,
    pub fallback: Option<&'a Path>,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: &'a Path,
    pub stdio: [Stdio; 3],
    pub terminal: Option<RawFd>,
    pub cgroup: Option<&'a ForChild>,
    pub keep: [RawFd; 2],
}

/// Forks and execs the helper; its pid once it runs.
pub(super) fn fork_exec(helper: Helper<'_>) -> std::io::Result<Pid> {
    let program = c_string(helper.program.as_os_str())?;
    let fallback = match helper.fallback {
        Some(path) => Some(c_string(path.as_os_str())?),
        None => None,
    };
    let mut argv_owned = vec![program.clone()];
    for arg in &helper.args {
        argv_owned.push(c_string(arg)?);
    }
    // One value per name, the last given winning, as std's Command keeps them.
    let env: std::collections::BTreeMap<OsString, OsString> = helper.env.into_iter().collect();
    let mut env_owned = Vec::with_capacity(env.len());
    for (key, value) in &env {
        let mut pair = key.clone();
        pair.push("=");
        pair.push(value);
        env_owned.push(c_string(&pair)?);
    }
    let argv = pointers(&argv_owned);
    let envp = pointers(&env_owned);
    let cwd = c_string(helper.cwd.as_os_str())?;
    let [stdin, stdout, stderr] = helper.stdio;
    let opened = [stdin.open()?, stdout.open()?, stderr.open()?];
    let (errors_read, errors_write) = pipe::pipe()?;
    let dir = helper.cgroup.map(|cg| cg.dir.as_raw_fd());
    let mut setup = Setup {
        program: &program,
        fallback: fallback.as_deref(),
        argv: &argv,
        envp: &envp,
        cwd: &cwd,
        stdio: [opened[0].raw(), opened[1].raw(), opened[2].raw()],
        terminal: helper.terminal,
        cgroup_procs: None,
        parent: std::process::id() as libc::pid_t,
        keep: helper.keep,
        errors: errors_write.as_raw_fd(),
    };
    // SAFETY: the child only runs `exec_helper`, which makes async-signal-safe calls on `setup`
    // (built above, copied with the address space) and ends in execve or _exit.
    let (pid, placed) = unsafe { fork_into(dir) }?;
    if pid == 0 {
        // A kernel that could not fork into the cgroup: the child moves itself (child.rs).
        if placed == Placed::Here {
            setup.cgroup_procs = helper.cgroup.map(|cg| cg.procs.as_raw_fd());
        }
        // SAFETY: in the child of fork_into, `setup` valid (see above).
        unsafe { exec_helper(&setup) }
    }
    drop(errors_write);
    wait_exec(errors_read, pid)
}

/// Reads the child's errno, if any, from the pipe whose write end exec closes.
fn wait_exec(errors: std::os::fd::OwnedFd, pid: libc::pid_t) -> std::io::Result<Pid> {
    let mut file = std::fs::File::from(errors);
    let mut bytes = [0u8; 4];
    let mut got = 0;
    while got < bytes.len() {
        match file.read(&mut bytes[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if got == 0 {
        return Ok(Pid::from_raw(pid));
    }
    // The child failed before the helper ran: collect it, then say why.
    // SAFETY: waitpid of our own child, which has exited or is about to.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    Err(std::io::Error::from_raw_os_error(i32::from_ne_bytes(bytes)))
}

fn c_string(s: &OsStr) -> std::io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an argument or variable holds a NUL byte",
        )
    })
}

/// The strings' pointers, ending in a null pointer.
fn pointers(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}
