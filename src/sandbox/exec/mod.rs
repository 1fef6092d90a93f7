//! Entering the sandbox: restricting the job's first process, then exec of CMD. Two processes do it
//! with the same code ([`enter`]): the supervisor's forked child itself, when the supervisor had no
//! other thread at the fork (a copy of a single-threaded process may allocate freely), and
//! otherwise the pre-exec helper, `isolate __sandbox-exec -- CMD`, exec'd by that child with the
//! job's environment and the plan in it, a fresh single-threaded process. The order is that of
//! docs/sandbox.md: the policy's rlimits, drop every capability, `no_new_privs`, Landlock,
//! close-on-exec for every descriptor above 2, the seccomp filter (built by the supervisor
//! meanwhile; its notification descriptor sent back, then closed here), then exec CMD (becoming
//! the job's main process, same pid). A failure is reported on the status socket (handover.rs),
//! which exec closes.
//! The restrictions besides Landlock are in restrict.rs; why exec failed, in unexecutable.rs.

mod program;
mod restrict;
mod sentinel;
mod unexecutable;

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::error::Result;
use crate::sandbox::plan::{Plan, Rules};
use crate::sandbox::{handover, landlock, monitor, namespaces, seccomp, step_failed};

pub use program::{program, Program};
use restrict::{close_range_cloexec, drop_capabilities, set_limit};
use unexecutable::unexecutable;

/// The argument that selects the helper; not a subcommand users see.
pub const ARG: &str = "__sandbox-exec";
/// The variable carrying the plan as JSON; removed before exec.
pub const PLAN_VAR: &str = "ISOLATE_SANDBOX_PLAN";

/// The variable carrying the supervisor's build; removed before exec.
pub const BUILD_VAR: &str = "ISOLATE_SANDBOX_BUILD";
/// The variable naming isolate's own executable, which a helper of another build execs in its
/// place; removed before exec.
pub const FALLBACK_VAR: &str = "ISOLATE_SANDBOX_FALLBACK";
/// This build's identity (build.rs): a plan from another build is refused.
pub const BUILD: &str = env!("ISOLATE_BUILD");
/// The helper on its own, installed beside isolate (src/bin/isolate-sandbox-exec.rs).
pub const PROGRAM: &str = "isolate-sandbox-exec";

/// Status codes the helper reports before it exits with the same number.
pub const SETUP_FAILED: u8 = 125;
pub const NOT_EXECUTABLE: u8 = 126;
pub const NOT_FOUND: u8 = 127;

/// Entry point of the helper. Never returns.
pub fn main(args: &[String]) -> ! {
    if std::env::var_os(BUILD_VAR).is_some_and(|b| b != BUILD) {
        of_another_build(args);
    }
    let plan: Option<Plan> = std::env::var(PLAN_VAR)
        .ok()
        .and_then(|json| serde_json::from_str(&json).ok());
    let Some(plan) = plan else {
        eprintln!("isolate: {ARG} is internal to isolate and takes its plan from isolate run");
        std::process::exit(SETUP_FAILED.into());
    };
    if plan.build != BUILD {
        // Said before the status descriptor is trusted: it is the other build's idea of one.
        eprintln!(
            "isolate: {} is not from the same build as the isolate that started it \
             (reinstall isolate: cargo install puts both in place)",
            std::env::current_exe().unwrap_or_default().display()
        );
        std::process::exit(SETUP_FAILED.into());
    }
    let cmd = match args {
        [dashdash, cmd @ ..] if dashdash == "--" => cmd,
        _ => &[],
    };
    enter(&plan, cmd, Environment::Inherited)
}

/// CMD's environment.
pub enum Environment<'a> {
    /// The helper's own, less the variables that carried the plan.
    Inherited,
    /// Exactly these variables (the supervisor's forked child, whose own are the supervisor's).
    Given(&'a [(OsString, OsString)]),
}

/// Restricts this process as `plan` says, waits to be released, and execs CMD: the helper after
/// reading its plan, or the supervisor's forked child itself when the supervisor had no other
/// thread to fork beside (supervise/spawn). Never returns; a failure is reported on the status
/// socket, and the process `_exit`s without running anything of the parent's it was copied from.
pub fn enter(plan: &Plan, cmd: &[String], env: Environment<'_>) -> ! {
    // SAFETY: the supervisor passed us this descriptor, open and owned by nobody else here; exec
    // closes it (never a drop: an unwinding panic leaves it to report on).
    let status = unsafe { std::fs::File::from_raw_fd(plan.status_fd) };
    let mut status = std::mem::ManuallyDrop::new(status);
    let mut fail = |code: u8, message: String| -> ! {
        let _ = status.write_all(&[code]);
        let _ = status.write_all(message.as_bytes());
        // SAFETY: _exit ends the process at once: no flush of buffers a forked child shares
        // with the supervisor, no handler of its.
        unsafe { libc::_exit(code.into()) }
    };
    if cmd.is_empty() {
        fail(SETUP_FAILED, "no command given".into());
    }
    if let Some(rules) = &plan.rules {
        if let Err(e) = restrict(rules, plan.sentinel) {
            fail(SETUP_FAILED, e.to_string());
        }
    }
    if let Err(e) = close_range_cloexec() {
        fail(
            SETUP_FAILED,
            format!("cannot mark descriptors close-on-exec: {e}"),
        );
    }
    // Last before exec: from here on every connect waits for the supervisor's answer.
    if let Some(sockets) = plan.rules.as_ref().and_then(|r| r.sockets.as_ref()) {
        let sent = handover::receive_filter(plan.status_fd)
            .and_then(|bpf| seccomp::install(&bpf, sockets.judge))
            .and_then(|listener| match listener {
                Some(listener) => handover::send_listener(plan.status_fd, listener),
                None => Ok(()),
            });
        if let Err(e) = sent {
            fail(SETUP_FAILED, e.to_string());
        }
    }
    if !released(plan.go_fd) {
        fail(
            SETUP_FAILED,
            "the supervisor did not release the job".into(),
        );
    }
    if plan.job_control {
        if let Err(e) = monitor::split() {
            fail(SETUP_FAILED, e.to_string());
        }
    }
    let mut command = Command::new(&cmd[0]);
    command.args(&cmd[1..]);
    match env {
        Environment::Inherited => command
            .env_remove(PLAN_VAR)
            .env_remove(BUILD_VAR)
            .env_remove(FALLBACK_VAR),
        Environment::Given(vars) => command
            .env_clear()
            .envs(vars.iter().cloned())
            .env_remove(PLAN_VAR)
            .env_remove(BUILD_VAR)
            .env_remove(FALLBACK_VAR),
    };
    let err = command.exec();
    match err.kind() {
        std::io::ErrorKind::NotFound => fail(NOT_FOUND, err.to_string()),
        _ => fail(NOT_EXECUTABLE, unexecutable(&cmd[0], &err)),
    }
}

/// This helper is not of the supervisor's build (isolate was relinked alone, or replaced while
/// this file stayed): isolate itself, named by the supervisor, takes over with the same arguments
/// and environment, before anything of the plan is read. Without it, the run fails.
fn of_another_build(args: &[String]) -> ! {
    if let Some(isolate) = std::env::var_os(FALLBACK_VAR) {
        // Once: should isolate itself be of yet another build, it refuses below.
        let err = Command::new(isolate)
            .arg(ARG)
            .args(args)
            .env_remove(FALLBACK_VAR)
            .exec();
        eprintln!("isolate: cannot exec isolate in place of its helper of another build: {err}");
    } else {
        eprintln!(
            "isolate: {} is not from the same build as the isolate that started it \
             (reinstall isolate: cargo install puts both in place)",
            std::env::current_exe().unwrap_or_default().display()
        );
    }
    std::process::exit(SETUP_FAILED.into());
}

/// Every restriction of `rules` and of the rules narrowing them, in the order of docs/sandbox.md:
/// the rlimits, every capability dropped, then Landlock (first the sentinel's domain around the
/// job's, with `sentinel`, where the rules scope signals). The error is what the helper reports.
fn restrict(rules: &Rules, sentinel: bool) -> Result<()> {
    // The namespaces first: joining the holder's user namespace gives the capabilities the mounts
    // need, all dropped below.
    if let Some(ns) = &rules.namespaces {
        namespaces::enter(ns).map_err(step_failed("cannot enter the job's namespaces"))?;
    }
    // A second policy's rules (`--resume` with another --policy) stack on the first.
    let stack = std::iter::successors(Some(rules), |r| r.narrowed.as_deref());
    for limit in stack.clone().flat_map(|r| &r.limits) {
        set_limit(limit).map_err(step_failed(format!("cannot set {:?}", limit.resource)))?;
    }
    drop_capabilities().map_err(step_failed("cannot drop capabilities"))?;
    if sentinel && rules.scope_signals {
        sentinel::post(rules.namespaces.as_ref().map(|ns| ns.holder))?;
    }
    for rules in stack {
        landlock::restrict_self(rules)?;
    }
    Ok(())
}

/// Held until the supervisor has said what it starts (its JSON start line comes before any
/// output of CMD); end of file on `go_fd` instead means it is gone, and CMD must not run
/// unsupervised.
fn released(go_fd: i32) -> bool {
    // SAFETY: the supervisor passed us this descriptor, open and owned by nobody else here.
    let mut go = unsafe { std::fs::File::from_raw_fd(go_fd) };
    let mut byte = [0u8; 1];
    matches!(std::io::Read::read(&mut go, &mut byte), Ok(1))
}
