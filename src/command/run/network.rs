//! The job's network beyond its policy's ports: `--allow-net` names, and the proxy of a domain
//! allowlist, started before anything of the job runs (its setup included).

use crate::error::{Error, Result};
use crate::sandbox::plan;
use crate::sandbox::policy::{Destination, Host, Loaded, Ports};
use crate::supervise::namespaces::Holder;
use crate::supervise::ports;
use crate::supervise::proxy::{self, AllowList, Listen, Proxy};

use super::prepared::Prepared;

/// `--allow-net`: more names for the policy's allowlist (under a policy without one, with TCP
/// open, the run's allowlist is these). A policy that refuses all TCP (`offline`) stays offline.
pub(super) fn add_allow_net(names: &[String], loaded: &mut Loaded) -> Result<()> {
    let net = &mut loaded.policy.network;
    for name in names {
        let destination: Destination = name
            .parse()
            .map_err(|e: Error| Error::Usage(format!("--allow-net: {e}")))?;
        if !net.proxied() && net.connect == Ports::Only(Vec::new()) {
            return Err(Error::Usage(format!(
                "--allow-net {name}: policy {} refuses all TCP; choose a policy with network access",
                loaded.name
            )));
        }
        if !net.allow.contains(&destination) {
            net.allow.push(destination);
        }
    }
    Ok(())
}

/// Starts the job's network proxy when its policy (or the one narrowing it) has a domain
/// allowlist, and routes the job's TCP to it (`rules`), with the job's own ports from `first`.
pub(super) fn start_proxy(
    prepared: &Prepared,
    rules: Option<&mut plan::Rules>,
    first: u16,
    inside: Option<&'static Holder>,
) -> Result<Option<Proxy>> {
    let Some(rules) = rules else {
        // --no-sandbox: nothing would hold the job to a proxy.
        return Ok(None);
    };
    let policies: Vec<&Loaded> = std::iter::once(&prepared.policy)
        .chain(&prepared.narrowing)
        .collect();
    proxy_for(&policies, &prepared.job_dir, rules, first, inside)
}

/// The proxy of the first of `policies` with a domain allowlist (logging to the job's `net.log` in
/// `job_dir`), with `rules` routed through it; `None` when none has one. With the job's network
/// namespace (`inside`), the proxy listens there, and every port of the job's loopback is its own.
pub(super) fn proxy_for(
    policies: &[&Loaded],
    job_dir: &std::path::Path,
    rules: &mut plan::Rules,
    first: u16,
    inside: Option<&'static Holder>,
) -> Result<Option<Proxy>> {
    let Some(net) = policies
        .iter()
        .map(|p| &p.policy.network)
        .find(|n| n.proxied())
    else {
        return Ok(None);
    };
    let own = ports::ports_from(first);
    let inside = inside.filter(|holder| holder.network());
    let allow = AllowList {
        destinations: net.allow.clone(),
        allow_local: net.allow_local,
        proxy: None,
    };
    let listen = match inside {
        Some(holder) => Listen::Inside(holder),
        None => Listen::Port(proxy::port_from_env()?),
    };
    let proxy = Proxy::start(allow, listen, Some(&job_dir.join(proxy::LOG)))?;
    rules.route_through(proxy.port(), &own, &named_local_of(net));
    Ok(Some(proxy))
}

/// The local destinations the job's allowlist names by address or as `localhost`, with a port
/// (or the web's two), as socket addresses: served inside a job's own network namespace and
/// forwarded to the machine's (supervise/forward.rs).
pub(super) fn named_local(prepared: &Prepared) -> Vec<std::net::SocketAddr> {
    std::iter::once(&prepared.policy)
        .chain(&prepared.narrowing)
        .map(|p| &p.policy.network)
        .find(|n| n.proxied())
        .map(named_local_of)
        .unwrap_or_default()
}

/// The local destinations `net`'s allowlist names, as socket addresses.
fn named_local_of(net: &crate::sandbox::policy::Network) -> Vec<std::net::SocketAddr> {
    let mut out = Vec::new();
    for d in net.allow.iter().filter(|d| proxy::names_local(d)) {
        let ips: Vec<std::net::IpAddr> = match &d.host {
            Host::Address(ip) => vec![*ip],
            Host::Exact(_) => vec![
                std::net::Ipv4Addr::LOCALHOST.into(),
                std::net::Ipv6Addr::LOCALHOST.into(),
            ],
            Host::Beneath(_) => Vec::new(),
        };
        let ports = match d.port {
            Some(port) => vec![port],
            None => Destination::DEFAULT_PORTS.to_vec(),
        };
        for ip in ips {
            for &port in &ports {
                let addr = std::net::SocketAddr::new(ip, port);
                if !out.contains(&addr) {
                    out.push(addr);
                }
            }
        }
    }
    out
}
