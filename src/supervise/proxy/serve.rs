//! One client connection from request to relay: the request head read, the job's secret checked,
//! the destination decided and resolved by the allowlist, connected, and the bytes relayed; every
//! decision one line of the log. It must never connect where the allowlist did not say yes.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use super::hello::{self, client_hello};
use super::lines::{Lines, Target};
use super::log::Decision;
use super::open::open;
use super::request::{self, Kind, Malformed, Request};
use super::response::response;
use super::secret::same;
use super::server::Shared;
use super::tunnel;

/// How long a client may take to send its request's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// One client connection: its request, decided, then relayed.
pub(super) fn serve(mut client: TcpStream, shared: &Shared, id: u64) {
    let lines = Lines {
        shared,
        peer: client.peer_addr().ok().map(|a| a.to_string()),
    };
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let _ = client.set_nodelay(true);
    let Some(req) = read_request(&mut client, &lines) else {
        return;
    };
    let to = Target {
        method: req.method.as_str(),
        host: req.host.as_str(),
        port: req.port,
    };
    let authorized = match &shared.credentials {
        None => true,
        Some(wanted) => req.credentials.as_deref().is_some_and(|c| same(c, wanted)),
    };
    if !authorized {
        let why = "proxy credentials missing or wrong (use the job's HTTPS_PROXY as it is)";
        let _ = client.write_all(&response(407, why));
        // Not the job (it has the secret): what it names is not recorded, so nobody else can
        // write destinations into the job's log and record.
        lines.refused(why.into());
        return;
    }
    let Some((grant, upstream)) = open(&mut client, shared, &to, &lines) else {
        return;
    };
    let _ = client.set_read_timeout(None);
    let _ = upstream.set_nodelay(true);
    if let (Ok(copy), Ok(mut live)) = (upstream.try_clone(), shared.live.lock()) {
        if let Some(ends) = live.get_mut(&id) {
            ends.push(copy);
        }
    }
    let first = match req.kind {
        Kind::Connect => match tunnel_start(&mut client, req.rest, &to, &lines) {
            Some(first) => first,
            None => return,
        },
        Kind::Forward => {
            let mut first = req.upstream_head;
            first.extend_from_slice(&req.rest);
            first
        }
    };
    let reason = match upstream.peer_addr() {
        Ok(addr) => format!("{grant} ({addr})"),
        Err(_) => grant.to_string(),
    };
    let relayed = tunnel::relay(&client, &upstream, &first);
    lines.entry(&to, Decision::Allowed, reason, relayed);
}

/// The request's head; `None`, answered and logged, when it is not one.
fn read_request(client: &mut TcpStream, lines: &Lines) -> Option<Request> {
    let malformed = match request::read(client, HEAD_TIMEOUT) {
        Ok(req) => return Some(req),
        Err(Malformed::Closed) => return None,
        Err(malformed) => malformed,
    };
    let (status, why) = match malformed {
        Malformed::TooLarge => (431, "request head too large"),
        Malformed::Bad(why) => (400, why),
        Malformed::Closed => return None,
    };
    let _ = client.write_all(&response(status, why));
    lines.refused(format!("malformed request: {why}"));
    None
}

/// A CONNECT tunnel's first bytes, once the client was told it is open; `None` (logged) when the
/// client is gone or they are refused (hello/mod.rs `refusal`: TLS naming another site than the
/// one the allowlist judged, or no TLS where the web's ports are).
fn tunnel_start(
    client: &mut TcpStream,
    rest: Vec<u8>,
    to: &Target,
    lines: &Lines,
) -> Option<Vec<u8>> {
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .is_err()
    {
        return None;
    }
    // TLS names the site it wants once more, in its ClientHello: a CDN or shared server
    // routes by that name, so it must be the one the allowlist judged.
    let first = client_hello(client, rest);
    let (named, why) = match hello::refusal(&hello::hello(&first), first.is_empty(), to) {
        Some(refused) => refused,
        None => return Some(first),
    };
    let named = Target {
        host: named.as_deref().unwrap_or(to.host),
        ..*to
    };
    lines.entry(&named, Decision::Refused, why, (0, 0));
    None
}
