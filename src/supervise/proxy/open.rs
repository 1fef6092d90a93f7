//! A destination decided by the allowlist, resolved, and connected to the first address that
//! answers; a refusal or a failure answered to the client and logged. It never connects to an
//! address the allowlist did not return.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::allow::Grant;
use super::lines::{Lines, Target};
use super::log::Decision;
use super::response::{refused_line, response};
use super::server::Shared;

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
    let decided = shared
        .allow
        .check(to.host, to.port)
        .and_then(|grant| Ok((grant, shared.allow.resolve(to.host, to.port, grant)?)));
    let (grant, addrs) = match decided {
        Ok(found) => found,
        Err(refusal) => {
            let line = refused_line(to.host, to.port, &refusal);
            let _ = client.write_all(&response(403, &line));
            lines.entry(to, Decision::Refused, refusal.to_string(), (0, 0));
            return None;
        }
    };
    match connect(&addrs) {
        Ok(upstream) => Some((grant, upstream)),
        Err(e) => {
            let why = format!("cannot connect to {}:{}: {e}", to.host, to.port);
            let _ = client.write_all(&response(502, &why));
            lines.entry(to, Decision::Allowed, why, (0, 0));
            None
        }
    }
}

/// The first of `addrs` that answers.
fn connect(addrs: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for addr in addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}
