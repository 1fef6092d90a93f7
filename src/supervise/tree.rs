//! The job's process tree, found by walking `/proc`: every process whose chain of parents reaches
//! the supervisor. The supervisor is a child subreaper, so a double-forked or `setsid` daemon is
//! re-parented to it and stays in this tree.

use std::collections::HashMap;
use std::fs;

use nix::unistd::Pid;

use crate::sys::process;

/// Every descendant of `root` (not `root` itself), parents before children.
pub fn descendants(root: Pid) -> Vec<Pid> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = process::parent(pid) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut queue = vec![root.as_raw()];
    while let Some(pid) = queue.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            out.push(Pid::from_raw(child));
            queue.push(child);
        }
    }
    out
}

/// Every process whose session id is `sid` (the job's main process leads its own session).
pub fn in_session(sid: i32) -> Vec<Pid> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| process::session(pid) == Some(sid))
        .map(Pid::from_raw)
        .collect()
}
