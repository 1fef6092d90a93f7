//! A parsed request head interpreted: CONNECT's `host:port`, or an absolute-form `http://` URL
//! turned into the origin-form head sent upstream (the Host the allowlist judged, `Connection:
//! close`, the proxy's own headers stripped). It must never forward what it has not rewritten.

use super::authority::authority;
use super::basic::basic;
use super::{Kind, Malformed, Request};

pub(super) fn interpret(parsed: &httparse::Request, rest: &[u8]) -> Result<Request, Malformed> {
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
    let head = upstream_head(parsed, method, &path, authority_text);
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

/// The origin-form head sent upstream for `method` `path`: the Host the allowlist judged, the
/// client's headers but the proxy's own and those about the connection, and `Connection: close`.
fn upstream_head(
    parsed: &httparse::Request,
    method: &str,
    path: &str,
    authority_text: &str,
) -> Vec<u8> {
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
    head
}
