//! `isolate policy show [NAME|FILE]`: a profile fully resolved on this machine, as a run would
//! resolve it (creating nothing): every path with its rights, the network rules, the scopes, the
//! variables removed and set, the limits and timeout, what the kernel enforces of it, and the gaps.
//! Exits 1 when the profile does not load or a run with it would fail here.

use std::fmt::Write as _;

use serde::Serialize;

use crate::cli::{PolicyCommand, PolicyShowArgs};
use crate::command::{output, report_error};
use crate::error::{Error, Result};
use crate::sandbox::landlock::right_names;
use crate::sandbox::plan::{self, Access, FeatureState, Outcome, Preview};
use crate::sandbox::policy::{
    self, Compatibility, Destination, Environment, Loaded, Ports, Reach, Scopes,
};

pub fn run(command: PolicyCommand) -> Result<i32> {
    match command {
        PolicyCommand::Show(args) => show(args),
    }
}

/// The JSON of `policy show --json`.
#[derive(Serialize)]
struct Shown<'a> {
    name: &'a str,
    /// The profile, then what it extends.
    sources: &'a [String],
    landlock_abi: Option<u32>,
    paths: Vec<PathShown<'a>>,
    network: NetworkShown<'a>,
    scopes: &'a Scopes,
    environment: &'a Environment,
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
const SHOWN_ABI: u32 = 5;

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
        let _ = human(&shown, &mut text);
        output::text(&text)?;
    }
    for problem in &preview.problems {
        report_error(&Error::Refused(format!(
            "a run with policy {} fails here: {problem}",
            loaded.name
        )));
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

/// The human form, written into `out`.
fn human(s: &Shown, out: &mut String) -> std::fmt::Result {
    let extends = match s.sources {
        [_, rest @ ..] if !rest.is_empty() => format!(" (extends {})", rest.join(" <- ")),
        _ => String::new(),
    };
    writeln!(out, "policy {}{extends}", s.name)?;
    match s.landlock_abi {
        Some(abi) => writeln!(out, "landlock ABI {abi} on this machine")?,
        None => writeln!(
            out,
            "no landlock on this machine (rights shown for ABI {SHOWN_ABI})"
        )?,
    }
    writeln!(out, "\npaths")?;
    for p in &s.paths {
        let access = match p.access {
            Access::Read => "read",
            Access::List => "list",
            Access::Write => "write",
            Access::Worktree => "worktree",
            Access::WriteFile => "write-file",
            Access::Device => "device",
            Access::Connect => "connect",
            Access::Deny => "deny-read",
        };
        let state = match p.outcome {
            Outcome::Granted => "",
            Outcome::Created => "created; ",
            Outcome::WillCreate => "created by a run; ",
            Outcome::Skipped => "SKIPPED; ",
            Outcome::Failed => "FAILS A RUN; ",
        };
        let path = p.path.as_deref().unwrap_or(p.written);
        let mut why = String::new();
        if p.written != path {
            why.push_str(&format!("from {}", p.written));
        }
        if let Some(detail) = p.detail {
            if !why.is_empty() {
                why.push_str("; ");
            }
            why.push_str(detail);
        }
        let why = format!("{state}{why}");
        let why = why.trim_end_matches("; ");
        writeln!(out, "  {access:<11} {path:<36} {why}")?;
    }
    writeln!(out, "\nrights")?;
    let abi = s.landlock_abi.unwrap_or(SHOWN_ABI);
    for (name, access) in [
        ("read", Access::Read),
        ("write", Access::Write),
        ("write-file", Access::WriteFile),
    ] {
        writeln!(out, "  {name:<11} {}", right_names(access, abi).join(", "))?;
    }
    let scoped = |on: bool| if on { "scoped" } else { "NOT scoped" };
    writeln!(out)?;
    if s.network.allow.is_empty() {
        writeln!(
            out,
            "network       tcp connect: {}; tcp bind: {}; udp: {}",
            s.network.tcp_connect, s.network.tcp_bind, s.network.udp
        )?;
    } else {
        writeln!(
            out,
            "network       tcp connect: isolate's proxy and the job's own ports only; tcp bind: {}; udp: none",
            s.network.tcp_bind
        )?;
        let local = match s.network.allow_local {
            true => "local addresses allowed",
            false => "local addresses refused",
        };
        writeln!(out, "allowlist     {local}; names (no port: 443 and 80):")?;
        for d in s.network.allow {
            writeln!(out, "  {d}")?;
        }
    }
    let outside = match s.network.unix_sockets.as_slice() {
        [] => "none".to_string(),
        paths => paths.join(", "),
    };
    writeln!(
        out,
        "unix sockets  the job's own; outside: {outside}; datagram: {}",
        s.network.unix_datagram
    )?;
    writeln!(
        out,
        "scopes        signals: {}; abstract unix sockets: {}",
        scoped(s.scopes.signals),
        scoped(s.scopes.abstract_unix_sockets)
    )?;
    let or_none = |list: Vec<String>| {
        if list.is_empty() {
            "(none)".to_string()
        } else {
            list.join(", ")
        }
    };
    writeln!(
        out,
        "environment   removed: {}",
        or_none(s.environment.remove.clone())
    )?;
    writeln!(
        out,
        "              set: {}",
        or_none(
            s.environment
                .set
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect()
        )
    )?;
    let limit = |v: Option<u64>| v.map_or("inherited".to_string(), |v| v.to_string());
    writeln!(
        out,
        "limits        open files: {}; processes: {}; core size: {}; address space: {}",
        limit(s.limits.open_files),
        limit(s.limits.processes),
        limit(s.limits.core_size),
        limit(s.limits.address_space)
    )?;
    writeln!(
        out,
        "timeout       {}",
        s.timeout.as_deref().unwrap_or("none (unless --timeout)")
    )?;
    let level = |l: policy::Level| match l {
        policy::Level::Required => "required",
        policy::Level::BestEffort => "best effort",
    };
    writeln!(
        out,
        "compatibility network: {}; scopes: {}; seccomp: {}",
        level(s.compatibility.network),
        level(s.compatibility.scopes),
        level(s.compatibility.seccomp)
    )?;
    writeln!(out, "\nfeatures")?;
    for f in s.features {
        let state = match (f.asked, f.enforced, f.required) {
            (false, _, _) => "not asked",
            (true, true, _) => "enforced",
            (true, false, true) => "MISSING: a run fails",
            (true, false, false) => "missing: a gap",
        };
        writeln!(out, "  {:<48} {:<42} {state}", f.description, f.needs)?;
    }
    for (title, list) in [
        ("gaps", s.gaps),
        ("notes", s.notes),
        ("problems", s.problems),
    ] {
        if list.is_empty() {
            continue;
        }
        writeln!(out, "\n{title}")?;
        for item in list {
            writeln!(out, "  - {item}")?;
        }
    }
    Ok(())
}
