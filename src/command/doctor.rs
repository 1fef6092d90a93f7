//! `isolate doctor [--json]`: what this machine enforces and every gap that remains: the Landlock
//! ABI and each feature, whether job trees get a cgroup v2, git's version, where state and worktrees
//! go, and the gaps of the default profile here. Exits 1 when isolate cannot sandbox here.

use std::path::{Path, PathBuf};

use std::fmt::Write as _;

use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::command::output;
use crate::error::{Error, Result};
use crate::git;
use crate::job::store;
use crate::sandbox::plan::{self, FeatureState};
use crate::sandbox::policy;
use crate::sandbox::probe;
use crate::supervise::cgroup::{self, CgroupProbe};

#[derive(Serialize)]
struct Doctor {
    /// True when `isolate run` can sandbox a job here under the default profile (Landlock ABI 3 or
    /// newer, and the seccomp layer).
    sandbox: bool,
    landlock: Landlock,
    seccomp: Seccomp,
    features: Vec<FeatureState>,
    cgroup: CgroupProbe,
    git: Option<String>,
    state_dir: Option<PathBuf>,
    worktrees_dir: Option<PathBuf>,
    /// The gaps of the default profile on this machine.
    gaps: Vec<String>,
    /// The domain allowlists of the built-in profiles that have one (their network goes through
    /// isolate's proxy).
    allowlists: Vec<Allowlist>,
    /// The credential stores every profile denies reading, as written (`sandbox::credentials`),
    /// and those of them that exist here.
    credentials: Credentials,
    /// The sandboxed runtime isolate runs in, when it is a known one that lacks what isolate needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime: Option<&'static str>,
    /// What to do, when isolate cannot sandbox here.
    #[serde(skip_serializing_if = "Option::is_none")]
    remedy: Option<String>,
    /// The tier jobs run in here (docs/sandbox.md, "Tiers"), and why not the namespaces tier.
    tier: TierReport,
    /// The jobs' caches (`<state>/caches`): where, and how much they hold.
    caches: Option<CachesReport>,
    /// What failed while looking.
    problems: Vec<String>,
}

#[derive(Serialize)]
struct TierReport {
    tier: crate::job::record::Tier,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<String>,
}

#[derive(Serialize)]
struct CachesReport {
    dir: PathBuf,
    bytes: u64,
    files: u64,
}

/// The tier a job would run in here, as the setting and the kernel decide.
fn tier(problems: &mut Vec<String>) -> TierReport {
    use crate::job::record::Tier;
    use crate::sandbox::namespaces::TierSetting;
    let configured = crate::config::load(None).ok().and_then(|c| c.config.tier);
    let setting = match TierSetting::from_env(configured) {
        Ok(setting) => setting,
        Err(e) => {
            problems.push(e);
            TierSetting::Auto
        }
    };
    if setting == TierSetting::Landlock {
        return TierReport {
            tier: Tier::Landlock,
            why: Some("ISOLATE_TIER=landlock or the configuration's tier".into()),
        };
    }
    match crate::sandbox::namespaces::probe() {
        Ok(()) => TierReport {
            tier: Tier::Namespaces,
            why: None,
        },
        Err(why) => {
            if setting == TierSetting::Namespaces {
                problems.push(format!("the namespaces tier is asked for, but {why}"));
            }
            TierReport {
                tier: Tier::Landlock,
                why: Some(why),
            }
        }
    }
}

#[derive(Serialize)]
struct Credentials {
    denied: Vec<String>,
    present: Vec<String>,
}

fn credentials() -> Credentials {
    let denied = crate::sandbox::credentials::stores();
    let present = denied
        .iter()
        .filter(|s| {
            crate::sandbox::plan::expand(s).is_ok_and(|p| std::fs::symlink_metadata(p).is_ok())
        })
        .cloned()
        .collect();
    Credentials { denied, present }
}

#[derive(Serialize)]
struct Allowlist {
    profile: &'static str,
    allow: Vec<String>,
    allow_local: bool,
}

/// The built-in profiles' allowlists.
fn allowlists(problems: &mut Vec<String>) -> Vec<Allowlist> {
    let mut found = Vec::new();
    for (name, _) in policy::BUILTIN {
        match policy::load(name) {
            Ok(loaded) if loaded.policy.network.proxied() => found.push(Allowlist {
                profile: name,
                allow: loaded
                    .policy
                    .network
                    .allow
                    .iter()
                    .map(|d| d.to_string())
                    .collect(),
                allow_local: loaded.policy.network.allow_local,
            }),
            Ok(_) => {}
            Err(e) => problems.push(e.to_string()),
        }
    }
    found
}

#[derive(Serialize)]
struct Landlock {
    /// The ABI isolate uses (the kernel's, capped by ISOLATE_LANDLOCK_ABI_MAX).
    abi: Option<u32>,
    kernel_abi: Option<u32>,
    /// ISOLATE_LANDLOCK_ABI_MAX, when set.
    cap: Option<u32>,
    /// Why there is no Landlock.
    unavailable: Option<&'static str>,
}

#[derive(Serialize)]
struct Seccomp {
    /// The seccomp layer can be built here (user notification, pidfd_getfd).
    available: bool,
    /// Why not.
    unavailable: Option<&'static str>,
    /// ISOLATE_NO_SECCOMP is set.
    disabled: bool,
}

pub fn run(args: DoctorArgs) -> Result<i32> {
    let mut report = doctor();
    if !report.sandbox {
        report.remedy = Some(probe::remedy());
    }
    if args.json {
        output::json(&report)?;
    } else {
        let mut text = String::new();
        let _ = human(&report, &mut text);
        output::text(&text)?;
    }
    if report.sandbox {
        return Ok(0);
    }
    if let (Some(abi), Some(why)) = (report.landlock.abi, report.seccomp.unavailable) {
        if abi >= probe::MIN_ABI {
            return Err(Error::SeccompUnavailable {
                policy: "default".into(),
                why,
            });
        }
    }
    let why = match (report.landlock.abi, report.landlock.unavailable) {
        (Some(abi), _) => format!(
            "write containment needs Landlock ABI {} or newer; isolate has ABI {abi} here",
            probe::MIN_ABI
        ),
        (None, Some(why)) => why.to_string(),
        (None, None) => "no Landlock here".to_string(),
    };
    Err(Error::SandboxUnavailable(format!(
        "isolate cannot sandbox here: {why}"
    )))
}

fn doctor() -> Doctor {
    let mut problems = Vec::new();
    let kernel = probe::kernel_abi();
    let abi = probe::landlock_abi();
    let (features, gaps) = match policy::load("default") {
        Ok(default) => {
            let preview = plan::preview(&default);
            problems.extend(preview.problems);
            (preview.features, preview.gaps)
        }
        Err(e) => {
            problems.push(e.to_string());
            (Vec::new(), Vec::new())
        }
    };
    let git = match git::run(Path::new("/"), ["--version"]) {
        Ok(out) => Some(out.text()),
        Err(e) => {
            problems.push(format!("git: {e}"));
            None
        }
    };
    let state_dir = match store::state_dir() {
        Ok(dir) => Some(dir),
        Err(e) => {
            problems.push(e.to_string());
            None
        }
    };
    let seccomp = probe::seccomp();
    let allowlists = allowlists(&mut problems);
    let tier = tier(&mut problems);
    let caches = state_dir.as_ref().map(|state| {
        let dir = crate::sandbox::caches::root(state);
        let (bytes, files) = crate::sandbox::caches::size(&dir);
        CachesReport { dir, bytes, files }
    });
    Doctor {
        sandbox: abi.is_some_and(|abi| abi >= probe::MIN_ABI) && seccomp.is_ok(),
        seccomp: Seccomp {
            available: seccomp.is_ok(),
            unavailable: seccomp.err(),
            disabled: probe::seccomp_disabled(),
        },
        landlock: Landlock {
            abi,
            kernel_abi: kernel.ok(),
            cap: probe::abi_cap(),
            unavailable: kernel.err(),
        },
        features,
        cgroup: cgroup::probe(),
        git,
        worktrees_dir: state_dir.as_ref().map(|d| d.join("worktrees")),
        state_dir,
        gaps,
        allowlists,
        credentials: credentials(),
        runtime: probe::runtime(),
        remedy: None,
        tier,
        caches,
        problems,
    }
}

/// The human form, written into `out`.
fn human(d: &Doctor, out: &mut String) -> std::fmt::Result {
    kernel(d, out)?;
    places(d, out)?;
    lists(d, out)
}

/// Landlock (and each feature), the seccomp layer, cgroups.
fn kernel(d: &Doctor, out: &mut String) -> std::fmt::Result {
    let landlock = match (&d.landlock, d.landlock.cap) {
        (
            Landlock {
                abi: Some(abi),
                kernel_abi: Some(kernel),
                ..
            },
            Some(cap),
        ) if cap < *kernel => {
            format!(
                "ABI {abi} (the kernel has ABI {kernel}; capped by {}={cap})",
                probe::ABI_MAX_VAR
            )
        }
        (Landlock { abi: Some(abi), .. }, _) => format!("ABI {abi}"),
        (
            Landlock {
                unavailable: Some(why),
                ..
            },
            _,
        ) => format!("none: {why}"),
        _ => "none".to_string(),
    };
    writeln!(out, "landlock      {landlock}")?;
    let seccomp = match d.seccomp.unavailable {
        None => "user notification and pidfd_getfd: the seccomp layer is built for every job"
            .to_string(),
        Some(why) => format!("NOT available: {why}"),
    };
    for f in &d.features {
        let state = match (f.available, probe::seccomp()) {
            (true, _) => "enforced".to_string(),
            (false, Err(why)) if f.needs_abi.is_none() => format!("NOT enforced: {why}"),
            (false, _) => format!(
                "NOT enforced (needs {}, Linux {}+)",
                f.needs,
                f.feature.linux()
            ),
        };
        writeln!(out, "  {:<48} {state}", f.description)?;
    }
    writeln!(out, "seccomp       {seccomp}")?;
    let tier = match (&d.tier.tier, &d.tier.why) {
        (crate::job::record::Tier::Namespaces, _) => {
            "namespaces: each job gets its own IPC namespace, /dev/shm and, under a restricted \
             network, network namespace"
                .to_string()
        }
        (_, Some(why)) => format!("Landlock only ({why})"),
        (_, None) => "Landlock only".to_string(),
    };
    writeln!(out, "tier          {tier}")?;
    if let Some(runtime) = d.runtime {
        writeln!(out, "runtime       {runtime}")?;
    }
    if let Some(remedy) = &d.remedy {
        writeln!(out, "remedy        {remedy}")?;
    }
    let cgroup = match (&d.cgroup.path, d.cgroup.writable) {
        (Some(path), true) => format!(
            "{} (writable: each job tree gets its own cgroup)",
            path.display()
        ),
        (Some(path), false) => format!(
            "{} (not writable: job trees are found by walking /proc)",
            path.display()
        ),
        (None, _) => "no cgroup v2 hierarchy (job trees are found by walking /proc)".to_string(),
    };
    writeln!(out, "cgroup v2     {cgroup}")
}

/// git, the state directory and the worktrees.
fn places(d: &Doctor, out: &mut String) -> std::fmt::Result {
    writeln!(
        out,
        "git           {}",
        d.git.as_deref().unwrap_or("not found")
    )?;
    let shown = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or("?".to_string(), |p| p.display().to_string())
    };
    writeln!(out, "state         {}", shown(&d.state_dir))?;
    writeln!(out, "worktrees     {}", shown(&d.worktrees_dir))?;
    if let Some(c) = &d.caches {
        writeln!(
            out,
            "caches        {} ({} MiB in {} files; `isolate prune --caches` empties them)",
            c.dir.display(),
            c.bytes / (1024 * 1024),
            c.files
        )?;
    }
    Ok(())
}

/// The default profile's gaps, the allowlists, the credential stores, problems.
fn lists(d: &Doctor, out: &mut String) -> std::fmt::Result {
    writeln!(out, "\ngaps of the default profile here")?;
    for gap in &d.gaps {
        writeln!(out, "  - {gap}")?;
    }
    if !d.allowlists.is_empty() {
        writeln!(
            out,
            "\nnetwork allowlists (through isolate's proxy; `isolate policy show NAME` for more)"
        )?;
        for a in &d.allowlists {
            writeln!(out, "  {:<12} {}", a.profile, a.allow.join(", "))?;
        }
    }
    writeln!(
        out,
        "\ncredentials   {} stores never readable under any profile (`isolate policy show` lists them); \
         here: {}",
        d.credentials.denied.len(),
        if d.credentials.present.is_empty() {
            "none exists".to_string()
        } else {
            d.credentials.present.join(", ")
        }
    )?;
    if !d.problems.is_empty() {
        writeln!(out, "\nproblems")?;
        for p in &d.problems {
            writeln!(out, "  - {p}")?;
        }
    }
    Ok(())
}
