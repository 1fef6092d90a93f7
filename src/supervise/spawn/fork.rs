//! The parent's side of starting the job: everything the child needs made before the fork (the
//! helper's argv and environment as C strings, its streams opened), the fork itself, into the
//! job's cgroup where the kernel can (sys::clone), and the wait until the child has exec'd the
//! helper or entered the sandbox itself, or says why it could not (an errno on a close-on-exec
//! pipe, as std's spawn does).

use std::ffi::{c_char, CString, OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::unistd::Pid;

use super::child::{self, Entry, Setup};
use super::stdio::Stdio;
use crate::supervise::cgroup::ForChild;
use crate::sys::clone::{fork_into, Placed};
use crate::sys::pipe;

/// How the child enters the sandbox.
pub(super) enum Start<'a> {
    /// It execs the pre-exec helper with these arguments and environment.
    Helper {
        program: &'a Path,
        fallback: Option<&'a Path>,
        args: Vec<OsString>,
        env: Vec<(OsString, OsString)>,
    },
    /// It enters the sandbox itself (`enter`), closing the parent's descriptors `close` first;
    /// only for a parent with no other thread.
    Within {
        enter: &'a dyn Fn(),
        close: [RawFd; 2],
    },
}

/// What the job's first process is started with.
pub(super) struct Child<'a> {
    pub start: Start<'a>,
    pub cwd: &'a Path,
    pub stdio: [Stdio; 3],
    pub terminal: Option<RawFd>,
    pub cgroup: Option<&'a ForChild>,
    /// The `cgroup.procs` of v1 cgroups the child moves itself into.
    pub limit_procs: &'a [std::fs::File],
    /// What the child keeps across the helper's exec: the status socket, the release pipe, the
    /// namespaces it joins.
    pub keep: &'a [RawFd],
}

/// Forks the job's first process; its pid once it has exec'd the helper or entered the sandbox,
/// and the cgroup the fork placed it in (`None`: none was asked for, or the child moves itself,
/// which the caller must check).
pub(super) fn fork_child(child: Child<'_>) -> std::io::Result<(Pid, Option<PathBuf>)> {
    // The helper's argv and environment, built before the fork; none to build for `Within`.
    let strings;
    let pointed;
    let entry = match &child.start {
        Start::Within { enter, close } => Entry::Within {
            enter: *enter,
            close: *close,
        },
        Start::Helper {
            program,
            fallback,
            args,
            env,
        } => {
            strings = HelperStrings::new(program, *fallback, args, env)?;
            pointed = (pointers(&strings.argv), pointers(&strings.envp));
            Entry::Helper {
                program: &strings.argv[0],
                fallback: strings.fallback.as_deref(),
                argv: &pointed.0,
                envp: &pointed.1,
            }
        }
    };
    let cwd = c_string(child.cwd.as_os_str())?;
    let [stdin, stdout, stderr] = child.stdio;
    let opened = [stdin.open()?, stdout.open()?, stderr.open()?];
    let (errors_read, errors_write) = pipe::pipe()?;
    let dir = child.cgroup.map(|cg| cg.dir.as_raw_fd());
    let limit_procs: Vec<RawFd> = child.limit_procs.iter().map(AsRawFd::as_raw_fd).collect();
    let mut setup = Setup {
        entry,
        cwd: &cwd,
        stdio: [opened[0].raw(), opened[1].raw(), opened[2].raw()],
        terminal: child.terminal,
        cgroup_procs: None,
        limit_procs: &limit_procs,
        parent: std::process::id() as libc::pid_t,
        keep: child.keep,
        errors: errors_write.as_raw_fd(),
    };
    // Nothing buffered to be written twice by a child that ends before its exec.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    // SAFETY: the child only runs `child::start`, which makes async-signal-safe calls on `setup`
    // (built above, copied with the address space) up to its exec, or enters the sandbox itself
    // only as the copy of a process with no other thread (the caller's promise), and ends in
    // execve or _exit.
    // Every signal blocked across the fork (as posix_spawn does): one sent to the child before it
    // has set the supervisor's handlers back to their defaults waits for that, instead of running
    // a copy of a handler that would swallow it.
    let blocked = block_all_signals();
    // SAFETY: as above.
    let forked = unsafe { fork_into(dir) };
    if !matches!(forked, Ok((0, _))) {
        restore_signals(&blocked);
    }
    let (pid, placed) = forked?;
    if pid == 0 {
        // A kernel that could not fork into the cgroup: the child moves itself (child.rs).
        if placed == Placed::Here {
            setup.cgroup_procs = child.cgroup.map(|cg| cg.procs.as_raw_fd());
        }
        // SAFETY: in the child of fork_into, `setup` valid (see above).
        unsafe { child::start(&setup) }
    }
    drop(errors_write);
    let placed = match placed {
        Placed::InCgroup => child.cgroup.map(|cg| cg.path.clone()),
        Placed::Here => None,
    };
    Ok((wait_exec(errors_read, pid)?, placed))
}

/// Blocks every signal in this thread; returns the mask it had.
fn block_all_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data, filled by sigfillset; the mask is this thread's own.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        old
    }
}

/// Puts back the mask `block_all_signals` returned.
fn restore_signals(old: &libc::sigset_t) {
    // SAFETY: a mask pthread_sigmask itself filled in.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
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

/// The helper's exec as C strings: argv (the program first) and the environment.
struct HelperStrings {
    fallback: Option<CString>,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

impl HelperStrings {
    fn new(
        program: &Path,
        fallback: Option<&Path>,
        args: &[OsString],
        env: &[(OsString, OsString)],
    ) -> std::io::Result<HelperStrings> {
        let fallback = match fallback {
            Some(path) => Some(c_string(path.as_os_str())?),
            None => None,
        };
        let mut argv = vec![c_string(program.as_os_str())?];
        for arg in args {
            argv.push(c_string(arg)?);
        }
        // One value per name, the last given winning, as std's Command keeps them.
        let env: std::collections::BTreeMap<&OsString, &OsString> =
            env.iter().map(|(k, v)| (k, v)).collect();
        let mut envp = Vec::with_capacity(env.len());
        for (key, value) in env {
            let mut pair = key.clone();
            pair.push("=");
            pair.push(value);
            envp.push(c_string(&pair)?);
        }
        Ok(HelperStrings {
            fallback,
            argv,
            envp,
        })
    }
}

/// Whether CMD's argv and environment can be passed to exec at all, checked before the fork of a
/// child that builds them itself only at CMD's exec (`Start::Within`): a NUL byte is the setup's
/// failure, as it is where the helper's strings are built, not CMD's.
pub(super) fn exec_strings(args: &[String], env: &[(OsString, OsString)]) -> std::io::Result<()> {
    let vars = env.iter().flat_map(|(key, value)| [key.as_os_str(), value]);
    args.iter()
        .map(OsStr::new)
        .chain(vars)
        .try_for_each(nul_free)
}

fn c_string(s: &OsStr) -> std::io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| holds_nul())
}

fn nul_free(s: &OsStr) -> std::io::Result<()> {
    match s.as_bytes().contains(&0) {
        false => Ok(()),
        true => Err(holds_nul()),
    }
}

fn holds_nul() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "an argument or variable holds a NUL byte",
    )
}

/// The strings' pointers, ending in a null pointer.
fn pointers(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}
