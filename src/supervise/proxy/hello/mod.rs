//! The first bytes of a CONNECT tunnel, read until the TLS ClientHello is whole, so that the name
//! it asks for can be held against the name the allowlist judged. It waits a bounded time only.

use std::net::TcpStream;
use std::time::Duration;

mod parse;
#[cfg(test)]
mod tests;

pub(super) use parse::{hello, Hello};

/// The first bytes of a tunnel, read until a TLS ClientHello is whole (or they are not TLS, or
/// `HELLO_TIMEOUT` passes, or more than a record could hold came).
pub(super) fn client_hello(client: &mut TcpStream, mut first: Vec<u8>) -> Vec<u8> {
    let deadline = std::time::Instant::now() + HELLO_TIMEOUT;
    let mut chunk = [0u8; 4096];
    while hello(&first) == Hello::Partial && first.len() < 5 + (1 << 14) {
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

/// How long a client may take to start its TLS handshake in a tunnel.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
