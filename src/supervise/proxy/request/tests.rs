//! Request heads as clients send them: CONNECT, absolute-form, and what is refused.

use super::basic::base64_decode;
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
