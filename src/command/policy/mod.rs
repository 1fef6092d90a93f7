//! `isolate policy show [NAME|FILE]`: a profile fully resolved on this machine, as a run would
//! resolve it (creating nothing): every path with its rights, the network rules, the scopes, the
//! variables removed and set, the limits and timeout, what the kernel enforces of it, and the gaps.
//! Exits 1 when the profile does not load or a run with it would fail here.

use serde::Serialize;

mod human;

use crate::cli::{PolicyCommand, PolicyShowArgs};
use crate::command::{output, report_error};
use crate::error::{Error, Result};
use crate::sandbox::landlock::right_names;
use crate::sandbox::plan::{self, Access, FeatureState, Outcome, Preview};
use crate::sandbox::policy::{
    self, Compatibility, Destination, Environment, Loaded, Ports, Reach, Scopes, Worktree,
};

pub fn run(command: PolicyCommand) -> Result<i32> {
    match command {
        PolicyCommand::Show(args) => show(args),
    }
}

/// The JSON of `policy show --json`.
#[derive(Serialize)]
pub(super) struct Shown<'a> {
    name: &'a str,
    /// The profile, then what it extends.
    sources: &'a [String],
    landlock_abi: Option<u32>,
    paths: Vec<PathShown<'a>>,
    /// The families of credential stores every profile denies (their stores are among `paths`).
    credential_families: Vec<FamilyShown>,
    network: NetworkShown<'a>,
    scopes: &'a Scopes,
    environment: &'a Environment,
    worktree: &'a Worktree,
    limits: LimitsShown,
    timeout: Option<String>,
    compatibility: &'a Compatibility,
    features: &'a [FeatureState],
    gaps: &'a [String],
    notes: &'a [String],
    problems: &'a [String],
}

#[derive(Serialize)]
struct PathShown<'a> {
    written: &'a str,
    path: Option<String>,
    access: Access,
    rights: Vec<String>,
    outcome: Outcome,
    detail: Option<&'a str>,
}

/// A family of credential stores (`sandbox::credentials`).
#[derive(Serialize)]
struct FamilyShown {
    name: &'static str,
    what: &'static str,
    /// Its stores by name (`~/…`).
    named: &'static [&'static str],
    /// How its other stores are found, in words.
    found: Vec<String>,
    /// Readable under its agent's own profile only.
    agents_own: bool,
}

#[derive(Serialize)]
struct NetworkShown<'a> {
    tcp_connect: &'a Ports,
    tcp_bind: &'a Ports,
    /// The policy's `udp` key (with an allowlist UDP is refused whatever it says; `tcp_connect` is
    /// then the proxy's, see `allow`).
    udp: Reach,
    /// Outside unix sockets the job may connect to (also listed under `paths`, access `connect`).
    unix_sockets: Vec<&'a str>,
    unix_datagram: Reach,
    /// The domain allowlist (the job's TCP then goes through isolate's proxy only); empty: none.
    allow: &'a [Destination],
    allow_local: bool,
}

#[derive(Serialize)]
struct LimitsShown {
    open_files: Option<u64>,
    processes: Option<u64>,
    core_size: Option<u64>,
    address_space: Option<u64>,
}

/// The ABI whose rights are shown when this kernel has no Landlock: the one isolate pins.
pub(super) const SHOWN_ABI: u32 = 5;

fn show(args: PolicyShowArgs) -> Result<i32> {
    let loaded = match policy::load(&args.policy) {
        Ok(loaded) => loaded,
        Err(e) => {
            report_error(&e);
            if args.json {
                output::text(&format!(
                    "{}\n",
                    serde_json::json!({ "error": e.to_string() })
                ))?;
            }
            return Ok(1);
        }
    };
    let preview = plan::preview(&loaded);
    let shown = shown(&loaded, &preview);
    if args.json {
        output::json(&shown)?;
    } else {
        let mut text = String::new();
        let _ = human::human(&shown, &mut text);
        output::text(&text)?;
    }
    for problem in &preview.problems {
        report_error(&Error::PolicyFails {
            policy: loaded.name.clone(),
            problem: problem.clone(),
        });
    }
    Ok(if preview.problems.is_empty() { 0 } else { 1 })
}

fn shown<'a>(loaded: &'a Loaded, preview: &'a Preview) -> Shown<'a> {
    let policy = &loaded.policy;
    let abi = preview.landlock_abi.unwrap_or(SHOWN_ABI);
    let paths = preview
        .paths
        .iter()
        .map(|r| PathShown {
            written: &r.written,
            path: r.path.as_ref().map(|p| p.display().to_string()),
            access: r.access,
            rights: match (r.outcome, r.access) {
                (Outcome::Skipped | Outcome::Failed, _) => Vec::new(),
                (_, Access::Connect) => vec!["connect_unix".to_string()],
                _ => right_names(r.access, abi),
            },
            outcome: r.outcome,
            detail: r.detail.as_deref(),
        })
        .collect();
    let limits = &policy.limits;
    Shown {
        name: &loaded.name,
        sources: &loaded.sources,
        landlock_abi: preview.landlock_abi,
        paths,
        credential_families: families(),
        network: NetworkShown {
            tcp_connect: &policy.network.connect,
            tcp_bind: &policy.network.bind,
            udp: policy.network.udp,
            unix_sockets: policy
                .network
                .unix_sockets
                .iter()
                .map(|r| r.path.as_str())
                .collect(),
            unix_datagram: policy.network.unix_datagram,
            allow: &policy.network.allow,
            allow_local: policy.network.allow_local,
        },
        scopes: &policy.scopes,
        environment: &policy.environment,
        worktree: &policy.worktree,
        limits: LimitsShown {
            open_files: limits.open_files,
            processes: limits.processes,
            core_size: limits.core_size,
            address_space: limits.address_space,
        },
        timeout: limits
            .timeout
            .map(|t| humantime::format_duration(t).to_string()),
        compatibility: &policy.compatibility,
        features: &preview.features,
        gaps: &preview.gaps,
        notes: &preview.notes,
        problems: &preview.problems,
    }
}

/// Every family of credential stores, as `policy show` lists them.
fn families() -> Vec<FamilyShown> {
    use crate::sandbox::credentials::{Finder, FAMILIES};
    FAMILIES
        .iter()
        .map(|f| FamilyShown {
            name: f.name,
            what: f.what,
            named: f.paths,
            found: f
                .found
                .iter()
                .map(|finder| match finder {
                    Finder::Holding { within, markers } => format!(
                        "each directory in {} holding {}",
                        within.join(", "),
                        markers.join(", ")
                    ),
                    Finder::Named {
                        within,
                        words,
                        suffixes,
                    } => format!(
                        "each dot-entry of {} whose name holds {} or ends in {}",
                        within.join(", "),
                        words.join(", "),
                        suffixes.join(", ")
                    ),
                })
                .collect(),
            agents_own: f.login,
        })
        .collect()
}
