//! A request to the proxy, read from the job: its head (at most `HEAD_MAX` bytes, parsed by
//! httparse), the destination it names (CONNECT's `host:port`, or an absolute-form `http://` URL),
//! its credentials, and for plain HTTP the head to send on: origin-form, `Connection: close` (so
//! that no second request, to another host, rides the same upstream connection), the proxy's own
//! headers (`Proxy-Authorization`, `Proxy-Connection`) stripped.
//!
//! Everything here is the job's input: bounded, never trusted, never printed raw.

mod authority;
mod basic;
mod interpret;
#[cfg(test)]
mod tests;

use std::io::Read;
use std::net::TcpStream;

use interpret::interpret;

/// The largest request head the proxy reads.
pub const HEAD_MAX: usize = 16 * 1024;
const HEADERS_MAX: usize = 100;

/// How the request reaches its destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `CONNECT host:port`: a tunnel (TLS, usually).
    Connect,
    /// An absolute-form plain HTTP request, forwarded.
    Forward,
}

/// A request head the proxy can act on.
#[derive(Debug)]
pub struct Request {
    pub kind: Kind,
    pub method: String,
    /// Normalized (`allow::normalize`).
    pub host: String,
    pub port: u16,
    /// The credentials of `Proxy-Authorization: Basic …`, decoded.
    pub credentials: Option<Vec<u8>>,
    /// For `Forward`: the head to send upstream.
    pub upstream_head: Vec<u8>,
    /// Bytes read past the head (the start of a body, or of TLS).
    pub rest: Vec<u8>,
}

/// Why a request was not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    /// The connection closed (or timed out) before a whole head arrived.
    Closed,
    TooLarge,
    /// Not HTTP, or a request the proxy does not serve; the words say which.
    Bad(&'static str),
}

/// Reads and parses a request head from `client`.
pub fn read(client: &mut TcpStream, within: std::time::Duration) -> Result<Request, Malformed> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    // The whole head within `within`, however slowly its bytes come (one a minute would hold
    // the connection forever under a per-read timeout alone).
    let deadline = std::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || client.set_read_timeout(Some(left)).is_err() {
            return Err(Malformed::Closed);
        }
        let n = match client.read(&mut chunk) {
            Ok(0) | Err(_) => return Err(Malformed::Closed),
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(&buf) {
            Ok(httparse::Status::Complete(len)) => {
                let request = interpret(&parsed, &buf[len..])?;
                return Ok(request);
            }
            Ok(httparse::Status::Partial) if buf.len() < HEAD_MAX => continue,
            Ok(httparse::Status::Partial) => return Err(Malformed::TooLarge),
            Err(httparse::Error::TooManyHeaders) => return Err(Malformed::TooLarge),
            Err(_) => return Err(Malformed::Bad("not an HTTP request")),
        }
    }
}
