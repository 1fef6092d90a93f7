//! A request to the proxy, read from the job: its head (at most `HEAD_MAX` bytes, parsed by
//! httparse), the destination it names (CONNECT's `host:port`, or an absolute-form `http://` URL),
//! its credentials, and for plain HTTP the head to send on: origin-form, `Connection: close` (so
//! that no second request, to another host, rides the same upstream connection), the proxy's own
//! headers (`Proxy-Authorization`, `Proxy-Connection`) stripped.
//!
//! Everything here is the job's input: bounded, never trusted, never printed raw.

use std::io::Read;
use std::net::TcpStream;

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

fn interpret(parsed: &httparse::Request, rest: &[u8]) -> Result<Request, Malformed> {
    let method = parsed.method.ok_or(Malformed::Bad("no method"))?;
    let target = parsed.path.ok_or(Malformed::Bad("no target"))?;
    let credentials = parsed
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("proxy-authorization"))
        .and_then(|h| basic(h.value));
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) =
            authority(target, None).ok_or(Malformed::Bad("CONNECT needs host:port"))?;
        return Ok(Request {
            kind: Kind::Connect,
            method: "CONNECT".into(),
            host,
            port,
            credentials,
            upstream_head: Vec::new(),
            rest: rest.to_vec(),
        });
    }
    let scheme_len = "http://".len();
    let lower = target.get(..scheme_len).map(str::to_ascii_lowercase);
    if lower.as_deref() != Some("http://") {
        return Err(Malformed::Bad(
            "a proxy request needs an absolute http:// URL (https goes through CONNECT)",
        ));
    }
    let after = &target[scheme_len..];
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority_text, path) = after.split_at(end);
    // userinfo@ in the URL would hide the real host from a careless reader: refused.
    if authority_text.contains('@') {
        return Err(Malformed::Bad("credentials in the URL are not forwarded"));
    }
    let (host, port) =
        authority(authority_text, Some(80)).ok_or(Malformed::Bad("a bad host in the URL"))?;
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('/') => p.to_string(),
        p => format!("/{p}"),
    };
    let path = path.split('#').next().unwrap_or("/").to_string();
    let version = parsed.version.unwrap_or(1);
    let mut head = format!("{method} {path} HTTP/1.{version}\r\n").into_bytes();
    // The Host the server sees is the one the allowlist judged: a client's own Host header (a
    // name of another site on the same server or CDN) is replaced.
    head.extend_from_slice(format!("Host: {authority_text}\r\n").as_bytes());
    for h in parsed.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "proxy-authorization" | "proxy-connection" | "connection" | "keep-alive" | "host"
        ) {
            continue;
        }
        head.extend_from_slice(h.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(h.value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok(Request {
        kind: Kind::Forward,
        method: method.to_string(),
        host,
        port,
        credentials,
        upstream_head: head,
        rest: rest.to_vec(),
    })
}

/// `host:port` (`[v6]:port`), or `host` alone with a `default` port.
fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = match text.rfind(':') {
        Some(i) if !text[i..].contains(']') => (&text[..i], text[i + 1..].parse::<u16>().ok()?),
        _ => (text, default?),
    };
    let host = super::allow::normalize(host);
    let fine = !host.is_empty()
        && port != 0
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'_'));
    fine.then_some((host, port))
}

/// The credentials of a `Basic` authorization value, decoded.
fn basic(value: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    base64_decode(encoded.trim())
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let len = match chunk.len() {
            4 => 3,
            3 => 2,
            2 => 1,
            _ => return None,
        };
        out.extend_from_slice(&n.to_be_bytes()[1..1 + len]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(head: &str) -> Result<Request, Malformed> {
        let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(head.as_bytes()) {
            Ok(httparse::Status::Complete(len)) => interpret(&parsed, &head.as_bytes()[len..]),
            _ => Err(Malformed::Bad("test")),
        }
    }

    #[test]
    fn connect_and_absolute_form() {
        let r = parse("CONNECT Api.Example.com.:443 HTTP/1.1\r\nProxy-Authorization: Basic aXNvbGF0ZTpzM2NyZXQ=\r\n\r\nTLS").unwrap();
        assert_eq!(
            (r.kind, r.host.as_str(), r.port),
            (Kind::Connect, "api.example.com", 443)
        );
        assert_eq!(r.credentials.as_deref(), Some(&b"isolate:s3cret"[..]));
        assert_eq!(r.rest, b"TLS");
        let r = parse("GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nAccept: */*\r\n\r\n").unwrap();
        assert_eq!(
            (r.kind, r.host.as_str(), r.port),
            (Kind::Forward, "example.com", 80)
        );
        let head = String::from_utf8(r.upstream_head).unwrap();
        assert_eq!(
            head,
            "GET /a?b HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        // The Host the allowlist judged, never the client's own (another site on the same CDN).
        let r = parse("GET http://example.com/ HTTP/1.1\r\nHOST: evil.example\r\n\r\n").unwrap();
        let head = String::from_utf8(r.upstream_head).unwrap();
        assert!(
            head.contains("Host: example.com\r\n") && !head.contains("evil"),
            "{head}"
        );
        let r = parse("GET http://[::1]:8080 HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("::1", 8080));
        assert!(parse("GET /relative HTTP/1.1\r\n\r\n").is_err());
        assert!(parse("GET https://example.com/ HTTP/1.1\r\n\r\n").is_err());
        assert!(parse("GET http://user@evil.com@example.com/ HTTP/1.1\r\n\r\n").is_err());
        assert!(parse("CONNECT example.com HTTP/1.1\r\n\r\n").is_err());
        assert!(parse("CONNECT exa\u{1b}mple.com:443 HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn base64_round() {
        assert_eq!(
            base64_decode("aXNvbGF0ZTpzM2NyZXQ=").unwrap(),
            b"isolate:s3cret"
        );
        assert_eq!(base64_decode("YQ==").unwrap(), b"a");
        assert_eq!(base64_decode("YWI=").unwrap(), b"ab");
        assert!(base64_decode("a").is_none());
        assert!(base64_decode("!!!!").is_none());
    }
}

/// What the first bytes a client sends through a tunnel say of the name it wants.
#[derive(Debug, PartialEq, Eq)]
pub enum Hello {
    /// A TLS ClientHello not all here yet: this many bytes of its record are.
    Partial,
    /// A TLS ClientHello naming this server (SNI, lowercase, no trailing dot).
    Names(String),
    /// TLS, without a server name (or one too long to reach in the first record).
    Unnamed,
    /// Not TLS.
    Other,
}

/// The server name of a TLS ClientHello at the start of `bytes` (RFC 8446 4.1.2, RFC 6066 3).
pub fn hello(bytes: &[u8]) -> Hello {
    if bytes.first() != Some(&0x16) {
        return match bytes.is_empty() {
            true => Hello::Partial,
            false => Hello::Other,
        };
    }
    let Some(len) = bytes
        .get(3..5)
        .map(|l| u16::from_be_bytes([l[0], l[1]]) as usize)
    else {
        return Hello::Partial;
    };
    let Some(record) = bytes.get(5..5 + len) else {
        return Hello::Partial;
    };
    server_name(record).map_or(Hello::Unnamed, Hello::Names)
}

fn server_name(record: &[u8]) -> Option<String> {
    let mut at = Cursor {
        bytes: record,
        at: 0,
    };
    if at.take(1)?[0] != 1 {
        return None; // not a ClientHello
    }
    at.take(3)?; // handshake length
    at.take(2 + 32)?; // version, random
    let session = at.take(1)?[0] as usize;
    at.take(session)?;
    let suites = at.u16()? as usize;
    at.take(suites)?;
    let compression = at.take(1)?[0] as usize;
    at.take(compression)?;
    let total = at.u16()? as usize;
    let mut ext = Cursor {
        bytes: at.take(total.min(at.bytes.len() - at.at))?,
        at: 0,
    };
    while let (Some(kind), Some(len)) = (ext.u16(), ext.u16()) {
        let data = ext.take(len as usize)?;
        if kind != 0 {
            continue;
        }
        let mut names = Cursor { bytes: data, at: 0 };
        names.u16()?;
        while let Some(name_type) = names.take(1) {
            let len = names.u16()? as usize;
            let name = names.take(len)?;
            if name_type[0] == 0 {
                let name = std::str::from_utf8(name).ok()?;
                return Some(super::allow::normalize(name));
            }
        }
    }
    None
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
}

#[cfg(test)]
mod hello_tests {
    use super::*;

    /// A ClientHello record naming `name` (the fields a real one has, minimal values).
    fn client_hello(name: &str) -> Vec<u8> {
        let mut sni = vec![0u8, 0];
        let list_len = (name.len() + 3) as u16;
        sni.extend_from_slice(&(list_len + 2).to_be_bytes());
        sni.extend_from_slice(&list_len.to_be_bytes());
        sni.push(0);
        sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
        sni.extend_from_slice(name.as_bytes());
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7u8; 32]);
        body.push(0); // session id
        body.extend_from_slice(&[0, 2, 0x13, 0x01]); // one suite
        body.extend_from_slice(&[1, 0]); // no compression
        body.extend_from_slice(&(sni.len() as u16).to_be_bytes());
        body.extend_from_slice(&sni);
        let mut hs = vec![1];
        hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(&body);
        let mut record = vec![0x16, 3, 1];
        record.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        record.extend_from_slice(&hs);
        record
    }

    #[test]
    fn the_server_name_of_a_client_hello_is_read_whole_or_said_partial() {
        let record = client_hello("Api.Example.com.");
        assert_eq!(hello(&record), Hello::Names("api.example.com".into()));
        assert_eq!(hello(&record[..20]), Hello::Partial);
        assert_eq!(hello(b""), Hello::Partial);
        assert_eq!(hello(b"GET / HTTP/1.1\r\n"), Hello::Other);
        let mut garbage = record.clone();
        garbage.truncate(60);
        garbage[4] = 55;
        assert_eq!(hello(&garbage), Hello::Unnamed);
    }
}
