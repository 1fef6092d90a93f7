//! The job's network beyond its policy's ports: `--allow-net` names, and the proxy of a domain
//! allowlist, started before anything of the job runs (its setup included).

use crate::error::{Error, Result};
use crate::sandbox::plan;
use crate::sandbox::policy::{Destination, Loaded, Ports};
use crate::supervise::ports;
use crate::supervise::proxy::{self, AllowList, Proxy};

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
) -> Result<Option<Proxy>> {
    let Some(rules) = rules else {
        // --no-sandbox: nothing would hold the job to a proxy.
        return Ok(None);
    };
    let policies: Vec<&Loaded> = std::iter::once(&prepared.policy)
        .chain(&prepared.narrowing)
        .collect();
    proxy_for(&policies, &prepared.job_dir, rules, first)
}

/// The proxy of the first of `policies` with a domain allowlist (logging to the job's `net.log` in
/// `job_dir`), with `rules` routed through it; `None` when none has one.
pub(super) fn proxy_for(
    policies: &[&Loaded],
    job_dir: &std::path::Path,
    rules: &mut plan::Rules,
    first: u16,
) -> Result<Option<Proxy>> {
    let Some(net) = policies
        .iter()
        .map(|p| &p.policy.network)
        .find(|n| n.proxied())
    else {
        return Ok(None);
    };
    let own = ports::ports_from(first);
    let allow = AllowList {
        destinations: net.allow.clone(),
        allow_local: net.allow_local,
        own: own.clone(),
        proxy: None,
    };
    let port = proxy::port_from_env()?;
    let proxy = Proxy::start(allow, port, Some(&job_dir.join(proxy::LOG)))?;
    rules.route_through(proxy.port(), &own);
    Ok(Some(proxy))
}
