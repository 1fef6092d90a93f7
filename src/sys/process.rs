//! A process's identity and place, read from `/proc/<pid>/stat`: its start time (which tells a
//! live process from a later one given the same pid), whether it is stopped, its parent, its
//! session, and how many threads it has.

use std::fs;

/// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parentheses,
/// so the split is at the last `)`): index 0 is field 3, the state.
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = fs::read_to_string(super::proc_view::dir(pid).join("stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 1..];
    Some(after_comm.split_whitespace().map(str::to_owned).collect())
}

/// A process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
pub fn start_time(pid: i32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// The start time of a process that has not ended: none for a zombie, whose pid and start time
/// stay until its parent reaps it, though it runs nothing any more.
pub fn live_start_time(pid: i32) -> Option<u64> {
    let fields = stat_fields(pid)?;
    match fields.first().map(String::as_str) {
        Some("Z" | "X") => None,
        _ => fields.get(19)?.parse().ok(),
    }
}

/// Whether a process is stopped, by a signal or a tracer (`/proc/<pid>/stat` field 3: `T`, `t`).
pub fn stopped(pid: i32) -> bool {
    stat_fields(pid).is_some_and(|f| matches!(f.first().map(String::as_str), Some("T" | "t")))
}

/// Whether a process has ended: gone, or a zombie its parent has not reaped (field 3: `Z`, `X`).
pub fn ended(pid: i32) -> bool {
    stat_fields(pid).map_or(true, |f| {
        matches!(f.first().map(String::as_str), Some("Z" | "X"))
    })
}

/// A process's parent (`/proc/<pid>/stat` field 4).
pub fn parent(pid: i32) -> Option<i32> {
    super::proc_view::ours(stat_fields(pid)?.get(1)?.parse().ok()?)
}

/// A process's session id (`/proc/<pid>/stat` field 6).
pub fn session(pid: i32) -> Option<i32> {
    super::proc_view::ours(stat_fields(pid)?.get(3)?.parse().ok()?)
}

/// How many threads this process has (`/proc/self/stat` field 20).
pub fn threads() -> Option<u64> {
    stat_fields(std::process::id() as i32)?
        .get(17)?
        .parse()
        .ok()
}

/// Whether this process's parent can continue it after it stops itself: a shell with job control,
/// in the same session, that put this process in a process group of its own (what sudo checks
/// before it stops). Under `script -c`, `ssh -t host CMD`, `bash -c` or as a session's leader
/// (`tmux new-window CMD`), nothing ever sends SIGCONT.
pub fn parent_does_job_control() -> bool {
    // SAFETY: these calls only query process ids.
    unsafe {
        let parent = libc::getppid();
        let (group, session) = (libc::getpgid(parent), libc::getsid(parent));
        group >= 0 && session == libc::getsid(0) && group != libc::getpgrp()
    }
}
