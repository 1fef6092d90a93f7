//! What the proxy answers itself: a status with one line of text an agent can read, and the line
//! of a refusal, with the hint that adds the destination for a run.

use super::allow::Refusal;

/// A response the proxy makes itself: the status and one line of text.
pub(super) fn response(status: u16, line: &str) -> Vec<u8> {
    let phrase = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        407 => "Proxy Authentication Required",
        431 => "Request Header Fields Too Large",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let body = format!("isolate: {line}\n");
    let auth = match status {
        407 => "Proxy-Authenticate: Basic realm=\"isolate\"\r\n",
        _ => "",
    };
    format!(
        "HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The one line a refused client reads.
pub(super) fn refused_line(host: &str, port: u16, refusal: &Refusal) -> String {
    let hint = match refusal {
        Refusal::NotListed => format!(" (isolate run --allow-net {host}:{port} adds it for a run)"),
        _ => String::new(),
    };
    format!("refused {host}:{port}: {refusal}{hint}")
}
