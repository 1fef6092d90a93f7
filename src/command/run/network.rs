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
    let policies = std::iter::once(&prepared.policy).chain(&prepared.narrowing);
    let Some(net) = policies.map(|p| &p.policy.network).find(|n| n.proxied()) else {
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
    let proxy = Proxy::start(allow, port, Some(&prepared.job_dir.join(proxy::LOG)))?;
    rules.route_through(proxy.port(), &own);
    Ok(Some(proxy))
}
