//! The job's process tree, found in `/proc`: every process whose chain of parents reaches the
//! supervisor. The supervisor is a child subreaper, so a double-forked or `setsid` daemon is
//! re-parented to it and stays in this tree.

use std::collections::HashMap;
use std::fs;

use nix::unistd::Pid;

use crate::sys::process;

/// Every descendant of `root` (not `root` itself), parents before children: from the kernel's
/// lists of each thread's children (`/proc/<pid>/task/<tid>/children`), which cost as much as the
/// tree is big, else (a kernel without them) by the walk of every process.
pub fn descendants(root: Pid) -> Vec<Pid> {
    let mut all = children_lists(root).unwrap_or_else(|| walked(root));
    // The holder of a job's namespaces is the supervisor's, not the job's: no stop ends it but the
    // supervisor's own (`Holder::end`).
    if let Some(holder) = crate::supervise::namespaces::Holder::current() {
        all.retain(|pid| pid.as_raw() != holder.pid());
    }
    all
}

/// The descendants of `root` by the kernel's children lists; `None` when the kernel has none.
fn children_lists(root: Pid) -> Option<Vec<Pid>> {
    let mut out = Vec::new();
    let mut queue = vec![root.as_raw()];
    let mut first = true;
    while let Some(pid) = queue.pop() {
        let tasks = match fs::read_dir(crate::sys::proc_view::dir(pid).join("task")) {
            Ok(tasks) => tasks,
            // Gone meanwhile: it has no children left to find.
            Err(_) if !first => continue,
            Err(_) => return None,
        };
        for task in tasks.flatten() {
            let list = task.path().join("children");
            let text = match fs::read_to_string(&list) {
                Ok(text) => text,
                Err(e) if first && e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(_) => continue,
            };
            for child in text
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
                .filter_map(crate::sys::proc_view::ours)
            {
                out.push(Pid::from_raw(child));
                queue.push(child);
            }
        }
        first = false;
    }
    Some(out)
}

/// The descendants of `root` by the parent of every process on the machine.
fn walked(root: Pid) -> Vec<Pid> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
            .and_then(crate::sys::proc_view::ours)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's children lists find what the walk of every process finds: the two processes a
    /// shell started, one of them in the background.
    #[test]
    fn the_children_lists_find_what_the_walk_finds() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30; wait"])
            .spawn()
            .unwrap();
        let shell = Pid::from_raw(child.id() as i32);
        let found = |pids: Vec<Pid>| {
            let mut pids: Vec<i32> = pids.iter().map(|p| p.as_raw()).collect();
            pids.sort();
            pids
        };
        let mut lists = Vec::new();
        for _ in 0..200 {
            lists = found(children_lists(shell).expect("the kernel has children lists"));
            if lists.len() >= 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let walk = found(walked(shell));
        let mine = descendants(Pid::this());
        for &pid in &lists {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(lists.len(), 2, "{lists:?}");
        assert_eq!(lists, walk);
        assert!(mine.contains(&shell), "{mine:?}");
    }
}
