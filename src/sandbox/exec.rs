//! The pre-exec helper: `isolate __sandbox-exec -- CMD...`, started by the supervisor in the job's
//! new session with the job's environment. It is a fresh single-threaded process, so it can allocate
//! freely while it restricts itself, in the order of spec/sandbox.md: the policy's rlimits, drop
//! every capability, `no_new_privs`, Landlock, close-on-exec for every descriptor above 2, the
//! seccomp filter (built by the supervisor meanwhile; its notification descriptor sent back, then
//! closed here), then exec CMD (becoming the job's main process, same pid). A failure is reported
//! on the status socket (handover.rs), which exec closes.

use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::sandbox::plan::{Limit, Plan, Resource};
use crate::sandbox::{agent, handover, landlock, monitor, seccomp};

/// The argument that selects the helper; not a subcommand users see.
pub const ARG: &str = "__sandbox-exec";
/// The variable carrying the plan as JSON; removed before exec.
pub const PLAN_VAR: &str = "ISOLATE_SANDBOX_PLAN";

/// Status codes the helper reports before it exits with the same number.
pub const SETUP_FAILED: u8 = 125;
pub const NOT_EXECUTABLE: u8 = 126;
pub const NOT_FOUND: u8 = 127;

/// Entry point of the helper. Never returns.
pub fn main(args: &[String]) -> ! {
    let plan: Option<Plan> = std::env::var(PLAN_VAR)
        .ok()
        .and_then(|json| serde_json::from_str(&json).ok());
    let Some(plan) = plan else {
        eprintln!("isolate: {ARG} is internal to isolate and takes its plan from isolate run");
        std::process::exit(SETUP_FAILED.into());
    };
    // SAFETY: the supervisor passed us this descriptor, open and owned by nobody else here.
    let mut status = unsafe { std::fs::File::from_raw_fd(plan.status_fd) };
    let mut fail = |code: u8, message: String| -> ! {
        let _ = status.write_all(&[code]);
        let _ = status.write_all(message.as_bytes());
        std::process::exit(code.into());
    };
    let cmd = match args {
        [dashdash, cmd @ ..] if dashdash == "--" && !cmd.is_empty() => cmd,
        _ => fail(SETUP_FAILED, "no command given".into()),
    };
    if let Some(rules) = &plan.rules {
        // A second policy's rules (`--resume` with another --policy) stack on the first.
        let stack = std::iter::successors(Some(rules), |r| r.narrowed.as_deref());
        for limit in stack.clone().flat_map(|r| &r.limits) {
            if let Err(e) = set_limit(limit) {
                fail(
                    SETUP_FAILED,
                    format!("cannot set {:?}: {e}", limit.resource),
                );
            }
        }
        if let Err(e) = drop_capabilities() {
            fail(SETUP_FAILED, format!("cannot drop capabilities: {e}"));
        }
        for rules in stack {
            if let Err(e) = landlock::restrict_self(rules) {
                fail(SETUP_FAILED, e.to_string());
            }
        }
    }
    if let Err(e) = close_range_cloexec() {
        fail(
            SETUP_FAILED,
            format!("cannot mark descriptors close-on-exec: {e}"),
        );
    }
    // Last before exec: from here on every connect waits for the supervisor's answer.
    if plan.rules.as_ref().is_some_and(|r| r.sockets.is_some()) {
        let sent = handover::receive_filter(plan.status_fd)
            .and_then(|bpf| seccomp::install(&bpf))
            .and_then(|listener| handover::send_listener(plan.status_fd, listener));
        if let Err(e) = sent {
            fail(SETUP_FAILED, e.to_string());
        }
    }
    // Held until the supervisor has said what it starts (its JSON start line comes before any
    // output of CMD); end of file instead means it is gone, and CMD must not run unsupervised.
    // SAFETY: the supervisor passed us this descriptor, open and owned by nobody else here.
    let mut go = unsafe { std::fs::File::from_raw_fd(plan.go_fd) };
    let mut byte = [0u8; 1];
    if !matches!(std::io::Read::read(&mut go, &mut byte), Ok(1)) {
        fail(
            SETUP_FAILED,
            "the supervisor did not release the job".into(),
        );
    }
    drop(go);
    if plan.job_control {
        if let Err(e) = monitor::split(plan.status_fd) {
            fail(SETUP_FAILED, e.to_string());
        }
    }
    let err = Command::new(&cmd[0])
        .args(&cmd[1..])
        .env_remove(PLAN_VAR)
        .exec();
    match err.kind() {
        std::io::ErrorKind::NotFound => fail(NOT_FOUND, err.to_string()),
        _ => fail(NOT_EXECUTABLE, unexecutable(&cmd[0], &err)),
    }
}

/// Why exec of `command` failed with `err`, naming the file the sandbox kept the job from: the
/// command's real executable, or the interpreter its `#!` line names.
fn unexecutable(command: &str, err: &std::io::Error) -> String {
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let path = std::env::var("PATH").ok();
    let Some(executable) = agent::resolve(command, &cwd, path.as_deref()) else {
        return err.to_string();
    };
    let denied = |file: &std::path::Path| {
        format!(
            "{err}: the job may not read or execute {} (a read rule in the policy, or \
             `installation = true`, grants it)",
            file.display()
        )
    };
    // Without waiting: a FIFO given as CMD must not hang the helper.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&executable);
    match opened {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return denied(&executable),
        Err(_) => return format!("{err}: {}", executable.display()),
        Ok(_) => {}
    }
    let Some(head) = agent::head(&executable) else {
        return format!("{err}: {}", executable.display());
    };
    let n = head.len().min(256);
    let Some(line) = head[..n].strip_prefix(b"#!") else {
        return format!("{err}: {}", executable.display());
    };
    let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next().unwrap_or_default());
    let mut words = line.split_whitespace();
    let interpreter = match (words.next(), words.next()) {
        (Some(env), Some(program)) if env.ends_with("/env") => {
            agent::resolve(program, &cwd, path.as_deref())
        }
        (Some(program), _) => std::fs::canonicalize(program).ok(),
        _ => None,
    };
    match interpreter {
        Some(interpreter) if agent::head(&interpreter).is_none() => format!(
            "{} (a script for {})",
            denied(&interpreter),
            executable.display()
        ),
        _ => format!("{err}: {}", executable.display()),
    }
}

/// Lowers a resource limit, soft and hard, so that the job cannot raise it again. Never raises the
/// hard limit isolate inherited: a policy can only take resources away.
fn set_limit(limit: &Limit) -> std::io::Result<()> {
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
fn drop_capabilities() -> Result<(), caps::errors::CapsError> {
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
fn close_range_cloexec() -> std::io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range only changes descriptor flags of this process.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
