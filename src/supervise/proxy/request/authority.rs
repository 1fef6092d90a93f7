//! The destination a request names, `host:port`, checked to be a plain host name or address: the
//! job's text, never trusted.

/// `host:port` (`[v6]:port`), or `host` alone with a `default` port.
pub(super) fn authority(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = match text.rfind(':') {
        Some(i) if !text[i..].contains(']') => (&text[..i], text[i + 1..].parse::<u16>().ok()?),
        _ => (text, default?),
    };
    let host = crate::supervise::proxy::allow::normalize(host);
    let fine = !host.is_empty()
        && port != 0
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'_'));
    fine.then_some((host, port))
}
