//! A tiny HTTP responder on std's TcpListener.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

/// Answer one request per connection with `body`, forever.
pub fn serve(listener: TcpListener, body: &str) -> anyhow::Result<()> {
    for stream in listener.incoming() {
        let mut stream = stream?;
        let mut line = String::new();
        let mut reader = BufReader::new(stream.try_clone()?);
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
        }
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
            body.len(),
            body
        )?;
    }
    Ok(())
}
