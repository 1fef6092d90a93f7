//! The first bytes of a CONNECT tunnel, read until the TLS ClientHello is whole, however many
//! records it came in, so that the name it asks for can be held against the name the allowlist
//! judged. It waits a bounded time only.

use std::net::TcpStream;
use std::time::Duration;

use super::lines::Target;

mod parse;
#[cfg(test)]
mod tests;

use parse::MAX_HELLO;
pub(super) use parse::{hello, Hello};

/// The first bytes of a tunnel, read until a TLS ClientHello is whole (or they are not TLS, or
/// `HELLO_TIMEOUT` passes, or more came than the largest ClientHello read needs).
pub(super) fn client_hello(client: &mut TcpStream, mut first: Vec<u8>) -> Vec<u8> {
    let deadline = std::time::Instant::now() + HELLO_TIMEOUT;
    let mut chunk = [0u8; 4096];
    while hello(&first) == Hello::Partial && first.len() < MAX_BYTES {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || client.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match std::io::Read::read(client, &mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => first.extend_from_slice(&chunk[..n]),
        }
    }
    let _ = client.set_read_timeout(None);
    first
}

/// The most read for a ClientHello: `MAX_HELLO` in records of a byte each, and their headers.
const MAX_BYTES: usize = 6 * (MAX_HELLO + 4);

/// How long a client may take to send its TLS ClientHello in a tunnel.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a tunnel to `to` that started with `hello` (`empty`: nothing, within the time a client
/// has) is refused, and the name it asked for if another; `None` when it may go on. A tunnel to
/// the web's ports carries TLS that names its target: a CDN or a shared server routes by the
/// server name, or by the `Host` of plain HTTP, which only the proxy's forward mode holds to the
/// allowlist's. Other ports carry what they carry (ssh sends no ClientHello), but TLS there names
/// the target too, whole.
pub(super) fn refusal(hello: &Hello, empty: bool, to: &Target) -> Option<(Option<String>, String)> {
    let literal = to.host.parse::<std::net::IpAddr>().is_ok();
    let web = matches!(to.port, 80 | 443);
    let why = match hello {
        Hello::Names(named) if named == to.host || literal => return None,
        Hello::Names(named) => {
            let why = format!(
                "the TLS server name {named} is not the CONNECT target {}",
                to.host
            );
            return Some((Some(named.clone()), why));
        }
        Hello::Unnamed if literal => return None,
        Hello::Unnamed => "the TLS ClientHello names no server, or cannot be read".to_string(),
        Hello::Partial if empty && !web => return None,
        Hello::Partial => format!(
            "no whole TLS ClientHello came within {} s",
            HELLO_TIMEOUT.as_secs()
        ),
        Hello::Other if !web => return None,
        Hello::Other => format!(
            "a tunnel to port {} must start TLS naming its target (plain HTTP goes through the \
             proxy as it is, not CONNECT)",
            to.port
        ),
    };
    Some((None, why))
}
