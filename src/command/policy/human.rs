//! `policy show` for a person: the resolved policy as aligned sections (paths, rights, network,
//! settings, features, gaps), from the same `Shown` value the JSON form prints.

use std::fmt::{self, Write as _};

use crate::sandbox::plan::{Access, Outcome};
use crate::sandbox::policy;

use crate::sandbox::landlock::right_names;

use super::{Shown, SHOWN_ABI};

/// The human form, written into `out`.
pub(super) fn human(s: &Shown, out: &mut String) -> fmt::Result {
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
    paths(s, out)?;
    families(s, out)?;
    rights(s, out)?;
    network(s, out)?;
    settings(s, out)?;
    lists(s, out)
}

/// Each path rule: its access, the path as resolved here, and what became of it.
fn paths(s: &Shown, out: &mut String) -> fmt::Result {
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
    Ok(())
}

/// The families of credential stores, each in a line or two: what, how many by name, how the
/// others are found.
fn families(s: &Shown, out: &mut String) -> fmt::Result {
    writeln!(
        out,
        "\ncredential families (deny-read above; a list of names cannot be complete: strict reads \
         nothing of ~ it does not name)"
    )?;
    for f in &s.credential_families {
        let own = if f.agents_own {
            "; each readable under its agent's profile"
        } else {
            ""
        };
        writeln!(
            out,
            "  {:<36} {}: {} by name{own}",
            f.name,
            f.what,
            f.named.len()
        )?;
        for found in &f.found {
            writeln!(out, "  {:<36} and {found}", "")?;
        }
    }
    Ok(())
}

/// The Landlock rights each kind of access grants, on this kernel's ABI.
fn rights(s: &Shown, out: &mut String) -> fmt::Result {
    writeln!(out, "\nrights")?;
    let abi = s.landlock_abi.unwrap_or(SHOWN_ABI);
    for (name, access) in [
        ("read", Access::Read),
        ("write", Access::Write),
        ("write-file", Access::WriteFile),
    ] {
        writeln!(out, "  {name:<11} {}", right_names(access, abi).join(", "))?;
    }
    Ok(())
}

/// TCP, the allowlist, unix sockets.
fn network(s: &Shown, out: &mut String) -> fmt::Result {
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
    )
}

/// Scopes, the environment, limits, the timeout and what is required of the kernel.
fn settings(s: &Shown, out: &mut String) -> fmt::Result {
    let scoped = |on: bool| if on { "scoped" } else { "NOT scoped" };
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
    writeln!(
        out,
        "worktree      ignores: {}",
        or_none(
            s.worktree
                .ignore
                .iter()
                .map(|r| r.as_str().to_string())
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
    )
}

/// The features asked and enforced, then the gaps, notes and problems.
fn lists(s: &Shown, out: &mut String) -> fmt::Result {
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
