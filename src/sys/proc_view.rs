//! `/proc` as isolate's pid namespace sees it. A container's `/proc` is mounted for its own pid
//! namespace, and then `/proc/<pid>` is the process isolate knows as `<pid>`. But `/proc` may be
//! of another pid namespace (`bwrap --unshare-pid` without `--proc`, a sandbox that shares the
//! host's): then `/proc/<pid>` is another process altogether, and the numbers `/proc` gives
//! (children, parents) are in its namespace. Here every pid is turned into the `/proc` directory
//! of that very process (found by its `NSpid`, whose last field is its pid in the innermost
//! namespace, isolate's for its descendants), and every number `/proc` gives back into isolate's.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// Whether `/proc` is of another pid namespace than this process's.
fn foreign() -> bool {
    static FOREIGN: OnceLock<bool> = OnceLock::new();
    *FOREIGN.get_or_init(|| {
        let listed = fs::read_link("/proc/self")
            .ok()
            .and_then(|p| p.to_str().and_then(|s| s.parse::<u32>().ok()));
        listed.is_some_and(|n| n != std::process::id())
    })
}

/// isolate's pid of processes `/proc` lists under another number.
static LISTED: Mutex<Option<HashMap<i32, i32>>> = Mutex::new(None);

/// The `/proc` directory of the process isolate knows as `pid`.
pub fn dir(pid: i32) -> PathBuf {
    if !foreign() {
        return PathBuf::from(format!("/proc/{pid}"));
    }
    if pid == std::process::id() as i32 {
        return PathBuf::from("/proc/self");
    }
    let listed = |map: &HashMap<i32, i32>| {
        map.iter()
            .find(|(_, &ours)| ours == pid)
            .map(|(&listed, _)| listed)
            .filter(|&listed| innermost(listed) == Some(pid))
    };
    let mut cache = LISTED.lock().unwrap_or_else(|e| e.into_inner());
    let map = cache.get_or_insert_with(HashMap::new);
    let found = listed(map).or_else(|| {
        *map = scan();
        listed(map)
    });
    match found {
        Some(listed) => PathBuf::from(format!("/proc/{listed}")),
        // Not one of isolate's namespace: nothing to read of it (a path that is never there).
        None => PathBuf::from(format!("/proc/-{pid}")),
    }
}

/// isolate's pid of the process `/proc` lists as `listed` (`None`: not in isolate's pid
/// namespace, or gone).
pub fn ours(listed: i32) -> Option<i32> {
    if !foreign() {
        return Some(listed);
    }
    let pid = innermost(listed)?;
    let mut cache = LISTED.lock().unwrap_or_else(|e| e.into_inner());
    cache.get_or_insert_with(HashMap::new).insert(listed, pid);
    Some(pid)
}

/// The last field of `NSpid` of the process `/proc` lists as `listed`, when it is in a namespace
/// nested in `/proc`'s (isolate's and its descendants').
fn innermost(listed: i32) -> Option<i32> {
    let status = fs::read_to_string(format!("/proc/{listed}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("NSpid:"))?;
    let fields: Vec<i32> = line
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    (fields.len() >= 2)
        .then(|| fields.last().copied())
        .flatten()
}

/// Every process of a nested namespace `/proc` lists, by its number there.
fn scan() -> HashMap<i32, i32> {
    let mut map = HashMap::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(listed) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(pid) = innermost(listed) {
            map.insert(listed, pid);
        }
    }
    map
}
