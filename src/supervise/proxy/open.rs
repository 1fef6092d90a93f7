//! A destination decided by the allowlist, resolved, and connected to the first address that
//! answers; a refusal or a failure answered to the client and logged. It never connects to an
//! address the allowlist did not return, nor to a port of the job's block that someone else
//! listens on.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::allow::{Grant, Refusal};
use super::lines::{Lines, Target};
use super::log::Decision;
use super::response::{refused_line, response};
use super::server::Shared;
use crate::supervise::broker::{others_listen, Members};

/// How long a connect to a destination may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The destination decided by the allowlist, resolved and connected: what granted it and the
/// connection; `None`, answered and logged, when it is refused or does not answer.
pub(super) fn open(
    client: &mut TcpStream,
    shared: &Shared,
    to: &Target,
    lines: &Lines,
) -> Option<(Grant, TcpStream)> {
    let mut refuse = |refusal: Refusal| {
        let line = refused_line(to.host, to.port, &refusal);
        // A name that does not resolve is the destination's failure, not the policy's refusal.
        let (status, decision) = match refusal {
            Refusal::Unresolved(_) => (502, Decision::Failed),
            _ => (403, Decision::Refused),
        };
        let _ = client.write_all(&response(status, &line));
        lines.entry(to, decision, refusal.to_string(), (0, 0));
        None
    };
    let decided = shared
        .allow
        .check(to.host, to.port)
        .and_then(|grant| Ok((grant, shared.allow.resolve(to.host, to.port, grant)?)))
        .and_then(|(grant, addrs)| match grant {
            Grant::Own if shared.inside.is_none() && !only_the_jobs(to.port) => {
                Err(Refusal::NotTheJobs)
            }
            _ => Ok((grant, addrs)),
        });
    let (grant, addrs) = match decided {
        Ok(found) => found,
        Err(refusal) => return refuse(refusal),
    };
    // The job's own servers in its own network namespace are reached there: nothing else is.
    let connected = match (grant, shared.inside) {
        (Grant::Own, Some(holder)) => connect_with(&addrs, |a| holder.connect_tcp(*a)),
        _ => connect_with(&addrs, |a| TcpStream::connect_timeout(a, CONNECT_TIMEOUT)),
    };
    match connected {
        // Checked again once made: a listener of someone else's that came up between the check
        // and the connect may have taken it (the broker's connects do the same: connection/).
        Ok(upstream)
            if grant == Grant::Own && shared.inside.is_none() && !only_the_jobs(to.port) =>
        {
            let _ = upstream.shutdown(std::net::Shutdown::Both);
            refuse(Refusal::NotTheJobs)
        }
        Ok(upstream) => Some((grant, upstream)),
        Err(e) => {
            let why = format!("cannot connect to {}:{}: {e}", to.host, to.port);
            let _ = client.write_all(&response(502, &why));
            lines.entry(to, Decision::Failed, why, (0, 0));
            None
        }
    }
}

/// Whether no listener but the job's holds `port` of the job's block where `localhost` reaches:
/// the job's processes are this supervisor's descendants (it is their child subreaper).
fn only_the_jobs(port: u16) -> bool {
    let job = Members {
        root: nix::unistd::getpid(),
        cgroup: None,
    };
    others_listen(port, &job) == Some(false)
}

/// The first of `addrs` that answers, each connected by `connect`.
fn connect_with(
    addrs: &[SocketAddr],
    connect: impl Fn(&SocketAddr) -> std::io::Result<TcpStream>,
) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for addr in addrs {
        match connect(addr) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}
