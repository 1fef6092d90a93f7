//! The job's tier (sandbox/namespaces.rs): namespaces where the kernel lets this user make them
//! and the setting does not say otherwise, else Landlock and seccomp alone, stated in the record
//! (`sandbox.tier`), the start line and the gaps. In the namespaces tier the job's rules gain its
//! namespaces: the holder's user namespace (and, for a policy that restricts the network, its
//! network namespace, inside which TCP and UDP are open: nothing but the job's loopback is there),
//! a private `/dev/shm` the job may write, and System V IPC of its own. In both tiers the job
//! gets its caches (sandbox/caches.rs): overlays on the user's own in the namespaces tier, the
//! tools' variables pointed at isolate's elsewhere.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::config;
use crate::error::{Error, Result};
use crate::job::record::SandboxReport;
use crate::job::store;
use crate::sandbox::caches::{self, Caches, Layer, Places};
use crate::sandbox::namespaces::{Namespaces, Tier, TierSetting, TIER_VAR};
use crate::sandbox::plan::{self, Rules};
use crate::supervise::namespaces::Holder;

use super::prepared::Prepared;

/// What entering the tier gave the job.
#[derive(Default)]
pub(super) struct Entered {
    /// The holder of its namespaces, in the namespaces tier.
    pub(super) holder: Option<&'static Holder>,
    /// The variables of its caches.
    pub(super) env: Vec<(String, OsString)>,
    /// Its own layers of the overlaid caches, published when it has ended.
    pub(super) layers: Vec<Layer>,
}

/// Chooses the tier for a job held to `rules` (`None`: `--no-sandbox`, which has neither tier nor
/// caches), enters it in `rules` with the job's caches, and says so in `report`.
pub(super) fn enter_tier(
    rules: Option<&mut Rules>,
    report: &mut SandboxReport,
    prepared: &Prepared,
) -> Result<Entered> {
    let Some(rules) = rules else {
        return Ok(Entered::default());
    };
    let configured = config::load(None)?.config.tier;
    let setting = TierSetting::from_env(configured).map_err(Error::Usage)?;
    let holder = match setting {
        TierSetting::Landlock => Err(format!("{TIER_VAR}=landlock or the configuration's tier")),
        _ => Holder::start(private_network(rules))
            .map_err(|e| format!("this user cannot make a user namespace here: {e}")),
    };
    let holder = match holder {
        Ok(holder) => Some(holder),
        Err(why) if setting == TierSetting::Namespaces => {
            return Err(Error::Sandbox(format!(
                "the namespaces tier was asked for ({TIER_VAR}=namespaces or the configuration's \
                 tier), but {why}"
            )))
        }
        Err(why) => {
            report.tier = Some(Tier::Landlock);
            report.gaps.push(format!(
                "the Landlock-only tier ({why}): no IPC namespace, no private /dev/shm, no \
                 network namespace (System V IPC, POSIX shared memory and semaphores are refused; \
                 under a restricted network the job's servers listen on loopback only), and the \
                 user's caches are not read through"
            ));
            None
        }
    };
    let caches = job_caches(prepared, holder.is_some(), rules)?;
    let targets: Vec<PathBuf> = caches.overlays.iter().map(|o| o.target.clone()).collect();
    drop_beneath(rules, &targets);
    let mut write = caches.write.clone();
    let Some(holder) = holder else {
        add_writable(rules, &write);
        return Ok(Entered {
            holder: None,
            env: caches.env,
            layers: Vec::new(),
        });
    };
    let shm = std::fs::canonicalize("/dev/shm")
        .ok()
        .filter(|p| p.is_dir());
    write.extend(shm.clone());
    add_writable(rules, &write);
    if holder.network() {
        open_inside(rules);
    }
    if let Some(sockets) = rules.sockets.as_mut() {
        sockets.private_ipc = true;
    }
    rules.namespaces = Some(Namespaces {
        holder: holder.pid(),
        user_fd: holder.user_ns(),
        net_fd: holder.net_ns(),
        shm,
        overlays: caches.overlays,
        hidden: caches.hidden,
    });
    report.tier = Some(Tier::Namespaces);
    Ok(Entered {
        holder: Some(holder),
        env: caches.env,
        layers: caches.layers,
    })
}

/// The job's caches, in `<state>/caches/<project>`, its own layers in its directory.
fn job_caches(prepared: &Prepared, overlay: bool, rules: &Rules) -> Result<Caches> {
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        return Ok(Caches::default());
    };
    let key = match &prepared.worktree {
        Some(wt) => wt.project.key(),
        None => crate::git::project::key_of(&prepared.cwd),
    };
    let project = store::state_dir()?.join("caches").join(key);
    let job = prepared.job_dir.join("caches");
    let env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    let stores = stores(prepared);
    // Readable under every ruleset the job is held to: beneath a read rule, or a directory carved
    // around a store (whose every other entry is read, as the overlay shows them).
    let readable = |dir: &Path| {
        std::iter::successors(Some(rules), |r| r.narrowed.as_deref()).all(|r| {
            r.read.iter().any(|read| dir.starts_with(read)) || r.list.iter().any(|l| l == dir)
        })
    };
    let state = store::state_dir()?;
    let mut ours = vec![state.clone()];
    ours.extend(prepared.worktree.as_ref().map(|wt| wt.key_dir.clone()));
    ours.extend(prepared.worktree.as_ref().map(|wt| wt.project.top.clone()));
    let places = Places {
        home: Path::new(&home),
        project: &project,
        job: &job,
        ours: &ours,
        overlay,
        env: &env,
        stores: &stores,
        readable: &readable,
    };
    caches::plan(&places).map_err(|e| Error::io("cannot make the job's caches in", &project, e))
}

/// The credential stores and the policies' denied paths, expanded (those that cannot be are
/// skipped: they name nothing here).
fn stores(prepared: &Prepared) -> Vec<PathBuf> {
    let denied = std::iter::once(&prepared.policy)
        .chain(&prepared.narrowing)
        .flat_map(|p| p.policy.filesystem.deny_read.iter().map(|e| e.path.clone()));
    crate::sandbox::credentials::stores()
        .into_iter()
        .chain(denied)
        .filter_map(|raw| plan::expand(&raw).ok())
        .map(PathBuf::from)
        .collect()
}

/// Every rule beneath an overlaid cache's directory dropped, under every ruleset the job is held
/// to. The job's rules are opened in its mount namespace, where such a path is the overlay's: what
/// the layers below the job's hold there decides what the rule names, and the project's jobs'
/// cache is one of them, written directly by the project's other jobs (the Landlock-only tier,
/// `strict`, a tool the user has no directory for). A link one of them left where the user has
/// `~/.cargo/registry` (a read rule carved around cargo's credentials) would carry the rule to
/// its target: `~/.ssh`. The directory itself is writable as a whole (`add_writable`), which
/// covers whatever the rules beneath it granted, and the stores beneath it are hidden by mounts.
fn drop_beneath(rules: &mut Rules, targets: &[PathBuf]) {
    let beneath = |p: &PathBuf| targets.iter().any(|t| p != t && p.starts_with(t));
    let mut next = Some(rules);
    while let Some(r) = next {
        r.read.retain(|p| !beneath(p));
        r.list.retain(|p| !beneath(p));
        r.write.retain(|p| !beneath(p));
        r.write_files.retain(|p| !beneath(p));
        next = r.narrowed.as_deref_mut();
    }
}

/// `paths` writable under every ruleset the job is held to.
fn add_writable(rules: &mut Rules, paths: &[PathBuf]) {
    let mut next = Some(rules);
    while let Some(r) = next {
        for path in paths {
            if !r.write.contains(path) {
                r.write.push(path.clone());
            }
        }
        next = r.narrowed.as_deref_mut();
    }
}

/// The policy restricts the network to an allowlist or to nothing: the job gets a network
/// namespace of its own (its proxy inside, or nothing).
fn private_network(rules: &Rules) -> bool {
    rules
        .sockets
        .as_ref()
        .is_some_and(|s| s.route.is_some() || (s.tcp_closed() && !s.udp))
}

/// Inside its own network namespace the job's TCP and UDP reach only its own loopback: open, and
/// its abstract unix names its own.
fn open_inside(rules: &mut Rules) {
    let mut next = Some(rules);
    while let Some(r) = next {
        r.connect_tcp = None;
        r.bind_tcp = None;
        if let Some(sockets) = r.sockets.as_mut() {
            sockets.tcp_connect = None;
            sockets.tcp_bind = None;
            sockets.udp = true;
            sockets.route = None;
            sockets.abstract_scoped = false;
            sockets.private_network = true;
        }
        next = r.narrowed.as_deref_mut();
    }
}
