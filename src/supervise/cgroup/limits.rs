//! Limits per job (`--memory`, `--cpus`, `--pids`, a policy's or the configuration's keys),
//! enforced by the job's cgroup: on the unified hierarchy (v2) `memory.max` with `memory.swap.max`
//! 0 and `memory.oom.group` (the whole group killed together), `cpu.max`, `pids.max` in the job's
//! own cgroup, where its parent has those controllers (or can be given them); on a machine whose
//! controllers are bound to cgroup v1 hierarchies (a hybrid mount), a cgroup of the job's own in
//! each of them (`memory.limit_in_bytes` and `memory.memsw.limit_in_bytes`,
//! `cpu.cfs_quota_us`, `pids.max`), which the job's first process enters before exec. Where no
//! controller can be had a run that asked for a limit fails saying why: never silently unlimited.
//! Afterwards, whether the memory limit killed a process of the job.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::place::unified_mount;
use super::Cgroup;
use crate::job::record::JobLimits;

/// The controllers `limits` need.
fn controllers(limits: &JobLimits) -> Vec<&'static str> {
    let mut wanted = Vec::new();
    if limits.memory.is_some() {
        wanted.push("memory");
    }
    if limits.millicpus.is_some() {
        wanted.push("cpu");
    }
    if limits.pids.is_some() {
        wanted.push("pids");
    }
    wanted
}

/// The period `cpu.max` and `cpu.cfs_period_us` count a quota in (100 ms, the kernel's default).
const PERIOD_US: u64 = 100_000;

/// How a job's limits are enforced.
#[derive(Debug)]
pub enum Limited {
    /// In its own cgroup v2.
    Unified(PathBuf),
    /// In a cgroup of its own in each v1 hierarchy that holds a controller it needs (made by
    /// isolate; removed with the job).
    Hybrid(Vec<PathBuf>),
}

impl Limited {
    /// Enforces `limits` for job `id`, whose cgroup v2 is `unified` (when it has one). `Err` says
    /// why they cannot be.
    pub fn enforce(
        limits: &JobLimits,
        id: &str,
        unified: Option<&Cgroup>,
    ) -> Result<Limited, String> {
        let wanted = controllers(limits);
        if let Some(cg) = unified {
            if enable(cg.path(), &wanted) {
                write_unified(cg.path(), limits)?;
                return Ok(Limited::Unified(cg.path().to_path_buf()));
            }
        }
        let mut made = Vec::new();
        let fail = |made: &[PathBuf], why: String| {
            for dir in made.iter().rev() {
                let _ = fs::remove_dir(dir);
            }
            Err(why)
        };
        for controller in &wanted {
            let Some(parent) = v1_own(controller) else {
                return fail(
                    &made,
                    format!(
                        "no {controller} controller can be had here: the unified cgroup hierarchy \
                         does not give it to this job's cgroup ({}), and no cgroup v1 hierarchy \
                         of it is writable (as an ordinary user, run isolate in a systemd user \
                         service or scope with Delegate=yes: `systemd-run --user --scope isolate …`)",
                        unified.map_or("none".to_string(), |c| c.path().display().to_string())
                    ),
                );
            };
            let dir = parent.join(format!("isolate-{id}"));
            if let Err(e) = fs::create_dir(&dir) {
                return fail(&made, format!("cannot create {}: {e}", dir.display()));
            }
            made.push(dir.clone());
            if let Err(why) = write_v1(&dir, controller, limits) {
                return fail(&made, why);
            }
        }
        Ok(Limited::Hybrid(made))
    }

    /// The `cgroup.procs` of each v1 cgroup, open for writing: the job's first process writes "0"
    /// to each before exec (supervise/spawn/child.rs).
    pub fn procs(&self) -> Vec<File> {
        match self {
            Limited::Unified(_) => Vec::new(),
            Limited::Hybrid(dirs) => dirs
                .iter()
                .filter_map(|d| {
                    OpenOptions::new()
                        .write(true)
                        .open(d.join("cgroup.procs"))
                        .ok()
                })
                .collect(),
        }
    }

    /// Whether the memory limit killed a process of the job.
    pub fn out_of_memory(&self) -> bool {
        let count = |text: &str, key: &str| {
            text.lines()
                .filter_map(|l| l.strip_prefix(key))
                .filter_map(|v| v.trim().parse::<u64>().ok())
                .sum::<u64>()
        };
        match self {
            Limited::Unified(dir) => fs::read_to_string(dir.join("memory.events"))
                .is_ok_and(|t| count(&t, "oom_kill ") + count(&t, "oom_group_kill ") > 0),
            Limited::Hybrid(dirs) => dirs.iter().any(|d| {
                fs::read_to_string(d.join("memory.oom_control"))
                    .is_ok_and(|t| count(&t, "oom_kill ") > 0)
            }),
        }
    }

    /// Removes the v1 cgroups isolate made (empty once the job has ended); the unified one is the
    /// job's own cgroup's to remove.
    pub fn remove(&self) {
        if let Limited::Hybrid(dirs) = self {
            for dir in dirs {
                let _ = fs::remove_dir(dir);
            }
        }
    }
}

/// Whether the controllers `wanted` are available in the cgroup v2 `dir` (its parent's
/// `cgroup.subtree_control` has them, or can be given them: a parent that is the hierarchy's root
/// or holds no process of its own).
fn enable(dir: &Path, wanted: &[&str]) -> bool {
    let Some(parent) = dir.parent() else {
        return false;
    };
    let have = |file: &str| fs::read_to_string(parent.join(file)).unwrap_or_default();
    let listed = |text: &str, c: &str| text.split_whitespace().any(|w| w == c);
    let available = have("cgroup.controllers");
    if !wanted.iter().all(|c| listed(&available, c)) {
        return false;
    }
    let on = have("cgroup.subtree_control");
    let missing: Vec<String> = wanted
        .iter()
        .filter(|c| !listed(&on, c))
        .map(|c| format!("+{c}"))
        .collect();
    if missing.is_empty() {
        return true;
    }
    OpenOptions::new()
        .write(true)
        .open(parent.join("cgroup.subtree_control"))
        .and_then(|mut f| f.write_all(missing.join(" ").as_bytes()))
        .is_ok()
}

fn put(dir: &Path, file: &str, value: &str) -> Result<(), String> {
    OpenOptions::new()
        .write(true)
        .open(dir.join(file))
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(|e| format!("cannot set {}: {e}", dir.join(file).display()))
}

fn write_unified(dir: &Path, limits: &JobLimits) -> Result<(), String> {
    if let Some(memory) = limits.memory {
        put(dir, "memory.max", &memory.to_string())?;
        // No swap beside it (absent without swap accounting), and one OOM kill takes the whole
        // job: a half-killed build is worse than none.
        if dir.join("memory.swap.max").exists() {
            put(dir, "memory.swap.max", "0")?;
        }
        put(dir, "memory.oom.group", "1")?;
    }
    if let Some(milli) = limits.millicpus {
        put(
            dir,
            "cpu.max",
            &format!("{} {PERIOD_US}", milli * PERIOD_US / 1000),
        )?;
    }
    if let Some(pids) = limits.pids {
        put(dir, "pids.max", &pids.to_string())?;
    }
    Ok(())
}

fn write_v1(dir: &Path, controller: &str, limits: &JobLimits) -> Result<(), String> {
    match controller {
        "memory" => {
            if let Some(memory) = limits.memory {
                put(dir, "memory.limit_in_bytes", &memory.to_string())?;
                // Memory and swap together no more than memory: no swap (where swap is
                // accounted).
                if dir.join("memory.memsw.limit_in_bytes").exists() {
                    put(dir, "memory.memsw.limit_in_bytes", &memory.to_string())?;
                }
            }
        }
        "cpu" => {
            if let Some(milli) = limits.millicpus {
                put(dir, "cpu.cfs_period_us", &PERIOD_US.to_string())?;
                put(
                    dir,
                    "cpu.cfs_quota_us",
                    &(milli * PERIOD_US / 1000).to_string(),
                )?;
            }
        }
        "pids" => {
            if let Some(pids) = limits.pids {
                put(dir, "pids.max", &pids.to_string())?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// This process's cgroup in the v1 hierarchy that holds `controller`, when there is one and it
/// is writable.
fn v1_own(controller: &str) -> Option<PathBuf> {
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = info.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut right = right.split_whitespace();
        let fstype = right.next()?;
        let options = right.nth(1)?;
        let point = left.split_whitespace().nth(4)?;
        (fstype == "cgroup" && options.split(',').any(|o| o == controller))
            .then(|| PathBuf::from(point))
    })?;
    // Not the unified mount's (a v1 hierarchy is never mounted there).
    if unified_mount().is_some_and(|u| u == mount) {
        return None;
    }
    let cgroup = fs::read_to_string("/proc/self/cgroup").ok()?;
    let relative = cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let _id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        controllers
            .split(',')
            .any(|c| c == controller)
            .then(|| path.trim_start_matches('/').to_string())
    })?;
    let dir = match relative.as_str() {
        "" => mount,
        r => mount.join(r),
    };
    nix::unistd::access(&dir, nix::unistd::AccessFlags::W_OK)
        .is_ok()
        .then_some(dir)
}

impl Limited {
    /// Whether the job's main process `pid` is within these limits: in the job's cgroup v2
    /// (`unified`, kept only when the process is in it), or in each v1 cgroup made for it.
    pub fn holds(&self, pid: nix::unistd::Pid, unified: Option<&Cgroup>) -> Result<(), String> {
        match self {
            Limited::Unified(dir) => match unified.is_some_and(|cg| cg.path() == dir) {
                true => Ok(()),
                false => Err("the job's first process is not in its cgroup".into()),
            },
            Limited::Hybrid(dirs) => {
                let procs = |dir: &PathBuf| {
                    fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default()
                };
                let wanted = pid.as_raw().to_string();
                match dirs
                    .iter()
                    .all(|d| procs(d).lines().any(|l| l.trim() == wanted))
                {
                    true => Ok(()),
                    false => Err("the job's first process could not enter its cgroups".into()),
                }
            }
        }
    }
}

impl Limited {
    /// How they are enforced, as the start line says it.
    pub fn kind(&self) -> &'static str {
        match self {
            Limited::Unified(_) => "the job's cgroup",
            Limited::Hybrid(_) => "the job's cgroups of the v1 hierarchies",
        }
    }
}
