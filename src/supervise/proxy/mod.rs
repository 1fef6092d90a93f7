//! The job's network proxy, for a policy with a domain allowlist (`[network] allow`): an HTTP proxy
//! on 127.0.0.1, run as threads of the job's supervisor from before the job is spawned until it
//! has ended. CONNECT opens a tunnel (TLS), an absolute-form request is forwarded (plain HTTP);
//! either only to a name the allowlist names, resolved here, to addresses `allow.rs` accepts.
//! The seccomp layer's broker lets the job's TCP reach this proxy's exact address and the job's
//! own ports, nothing else, and UDP is refused: names are resolved here, never by the job.
//!
//! Only the job can use it: its URL carries a secret made for the job
//! (`http://isolate:<secret>@127.0.0.1:<port>`), checked in every request's
//! `Proxy-Authorization` (407 without it). A refusal is a 403 whose body is one line the agent
//! can read; every decision is a line of `net.log` (log.rs) and counted for the job's record.
//!
//! It must never reach a destination it did not check, nor let a request through without the
//! secret, nor print what the job sent. A client that speaks garbage gets its connection closed;
//! the job goes on.

mod allow;
mod log;
mod request;
mod tunnel;

use std::collections::HashMap;
use std::io::Write;
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use allow::AllowList;
pub use log::NetLog;

use crate::error::{Error, Result};
use crate::job::record::NetworkCounts;
use allow::Refusal;
use log::{Decision, Entry};
use request::{Kind, Malformed, Request};

/// How long a client may take to send its request's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connect to a destination may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Connections served at once; one more is closed at once.
const CONNECTIONS_MAX: usize = 128;
/// How long `stop` waits for the connections it shut down to be logged.
const DRAIN: Duration = Duration::from_secs(2);

/// The log's name in the job's directory.
pub const LOG: &str = "net.log";
/// A fixed port for the proxy (`ISOLATE_PROXY_PORT`), instead of one the kernel picks.
pub const PORT_VAR: &str = "ISOLATE_PROXY_PORT";

/// The port `ISOLATE_PROXY_PORT` asks for (0: the kernel's choice).
pub fn port_from_env() -> Result<u16> {
    match std::env::var(PORT_VAR) {
        Err(_) => Ok(0),
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| Error::Usage(format!("{PORT_VAR}={text:?}: expected a TCP port"))),
    }
}

/// A running proxy.
pub struct Proxy {
    addr: SocketAddr,
    /// The accepting thread's listener, to shut down at `stop`.
    listener: TcpListener,
    secret: String,
    shared: Arc<Shared>,
    accepting: Option<std::thread::JoinHandle<()>>,
}

struct Shared {
    allow: AllowList,
    /// `isolate:<secret>`, as the client's credentials must be.
    credentials: Vec<u8>,
    log: NetLog,
    stopping: AtomicBool,
    /// Both ends of every connection being served, to shut down at `stop`.
    live: Mutex<HashMap<u64, Vec<TcpStream>>>,
    next: AtomicU64,
}

impl Proxy {
    /// Binds 127.0.0.1:`port` (0: a port of the kernel's choosing) and starts serving `allow` (its
    /// `proxy` is set here), logging to `log` (`<job_dir>/net.log`) when given.
    pub fn start(mut allow: AllowList, port: u16, log: Option<&Path>) -> Result<Proxy> {
        let cannot = |source| Error::ProxyStart { port, source };
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(cannot)?;
        let addr = listener.local_addr().map_err(cannot)?;
        allow.proxy = Some(addr);
        let log = match log {
            Some(path) => NetLog::open(path).map_err(|e| Error::io("cannot open", path, e))?,
            None => NetLog::counting(),
        };
        let secret = secret().map_err(cannot)?;
        let shared = Arc::new(Shared {
            allow,
            credentials: format!("isolate:{secret}").into_bytes(),
            log,
            stopping: AtomicBool::new(false),
            live: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        });
        let serving = Arc::clone(&shared);
        let kept = listener.try_clone().map_err(cannot)?;
        let accepting = std::thread::Builder::new()
            .name("isolate-proxy".into())
            .spawn(move || accept(listener, serving))
            .map_err(cannot)?;
        Ok(Proxy {
            addr,
            listener: kept,
            secret,
            shared,
            accepting: Some(accepting),
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The URL the job's tools are given: `http://isolate:<secret>@127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://isolate:{}@{}", self.secret, self.addr)
    }

    /// The decisions so far.
    pub fn counts(&self) -> NetworkCounts {
        self.shared.log.counts()
    }

    /// Stops accepting, shuts every connection down (the job has ended: nothing of it is left to
    /// use them) and waits a moment for them to be logged; the counts, final.
    pub fn stop(mut self) -> NetworkCounts {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread: on Linux, shutdown(2) of a listening socket makes a
        // blocked accept return (EINVAL), and every later one at once.
        // SAFETY: shutdown on a descriptor this proxy owns.
        unsafe { libc::shutdown(self.listener.as_raw_fd(), libc::SHUT_RDWR) };
        if let Some(thread) = self.accepting.take() {
            let _ = thread.join();
        }
        let deadline = Instant::now() + DRAIN;
        loop {
            let live = self.shared.live.lock().unwrap_or_else(|e| e.into_inner());
            if live.is_empty() || Instant::now() > deadline {
                break;
            }
            for stream in live.values().flatten() {
                let _ = stream.shutdown(Shutdown::Both);
            }
            drop(live);
            std::thread::sleep(Duration::from_millis(10));
        }
        self.shared.log.counts()
    }
}

/// 32 hexadecimal digits from the kernel's random source.
fn secret() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut got = 0;
    while got < bytes.len() {
        // SAFETY: getrandom writes at most the remaining length into `bytes`.
        let n = unsafe { libc::getrandom(bytes[got..].as_mut_ptr().cast(), bytes.len() - got, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn accept(listener: TcpListener, shared: Arc<Shared>) {
    crate::supervise::broker::quiet();
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let busy = shared.live.lock().map(|l| l.len()).unwrap_or(0) >= CONNECTIONS_MAX;
        if busy {
            let _ = (&stream).write_all(&response(503, "too many connections at once"));
            continue;
        }
        let id = shared.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(copy) = stream.try_clone() {
            if let Ok(mut live) = shared.live.lock() {
                live.insert(id, vec![copy]);
            }
        }
        let serving = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("isolate-proxy-conn".into())
            .spawn(move || {
                serve(stream, &serving, id);
                if let Ok(mut live) = serving.live.lock() {
                    live.remove(&id);
                }
            });
        if spawned.is_err() {
            if let Ok(mut live) = shared.live.lock() {
                live.remove(&id);
            }
        }
    }
}

/// A response the proxy makes itself: the status and one line of text.
fn response(status: u16, line: &str) -> Vec<u8> {
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

/// The same bytes, compared in a time that does not depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// One client connection: its request, decided, then relayed.
fn serve(mut client: TcpStream, shared: &Shared, id: u64) {
    let peer = client.peer_addr().ok().map(|a| a.to_string());
    let _ = client.set_read_timeout(Some(HEAD_TIMEOUT));
    let _ = client.set_nodelay(true);
    let entry = |method: &str, host: &str, port: u16, decision, reason: String, up, down| {
        shared.log.record(&Entry {
            time: log::now(),
            client: peer.clone(),
            method,
            host,
            port,
            decision,
            reason,
            bytes_up: up,
            bytes_down: down,
        })
    };
    let req: Request = match request::read(&mut client, HEAD_TIMEOUT) {
        Ok(req) => req,
        Err(Malformed::Closed) => return,
        Err(malformed) => {
            let (status, why) = match malformed {
                Malformed::TooLarge => (431, "request head too large"),
                Malformed::Bad(why) => (400, why),
                Malformed::Closed => return,
            };
            let _ = client.write_all(&response(status, why));
            entry(
                "-",
                "",
                0,
                Decision::Refused,
                format!("malformed request: {why}"),
                0,
                0,
            );
            return;
        }
    };
    let (method, host, port) = (req.method.as_str(), req.host.as_str(), req.port);
    let authorized = req
        .credentials
        .as_deref()
        .is_some_and(|c| same(c, &shared.credentials));
    if !authorized {
        let why = "proxy credentials missing or wrong (use the job's HTTPS_PROXY as it is)";
        let _ = client.write_all(&response(407, why));
        // Not the job (it has the secret): what it names is not recorded, so nobody else can
        // write destinations into the job's log and record.
        entry("-", "", 0, Decision::Refused, why.into(), 0, 0);
        return;
    }
    let decided = shared
        .allow
        .check(host, port)
        .and_then(|grant| Ok((grant, shared.allow.resolve(host, port, grant)?)));
    let (grant, addrs) = match decided {
        Ok(found) => found,
        Err(refusal) => {
            let line = refused_line(host, port, &refusal);
            let _ = client.write_all(&response(403, &line));
            entry(
                method,
                host,
                port,
                Decision::Refused,
                refusal.to_string(),
                0,
                0,
            );
            return;
        }
    };
    let upstream = match connect(&addrs) {
        Ok(upstream) => upstream,
        Err(e) => {
            let why = format!("cannot connect to {host}:{port}: {e}");
            let _ = client.write_all(&response(502, &why));
            entry(method, host, port, Decision::Allowed, why, 0, 0);
            return;
        }
    };
    let _ = client.set_read_timeout(None);
    let _ = upstream.set_nodelay(true);
    if let (Ok(copy), Ok(mut live)) = (upstream.try_clone(), shared.live.lock()) {
        if let Some(ends) = live.get_mut(&id) {
            ends.push(copy);
        }
    }
    let first = match req.kind {
        Kind::Connect => {
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .is_err()
            {
                return;
            }
            // TLS names the site it wants once more, in its ClientHello: a CDN or shared server
            // routes by that name, so it must be the one the allowlist judged.
            let first = client_hello(&mut client, req.rest);
            if let request::Hello::Names(named) = request::hello(&first) {
                if named != host && host.parse::<std::net::IpAddr>().is_err() {
                    let why =
                        format!("the TLS server name {named} is not the CONNECT target {host}");
                    entry(method, &named, port, Decision::Refused, why, 0, 0);
                    return;
                }
            }
            first
        }
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
    let (up, down) = tunnel::relay(&client, &upstream, &first);
    entry(method, host, port, Decision::Allowed, reason, up, down);
}

/// The first bytes of a tunnel, read until a TLS ClientHello is whole (or they are not TLS, or
/// `HELLO_TIMEOUT` passes, or more than a record could hold came).
fn client_hello(client: &mut TcpStream, mut first: Vec<u8>) -> Vec<u8> {
    let deadline = std::time::Instant::now() + HELLO_TIMEOUT;
    let mut chunk = [0u8; 4096];
    while request::hello(&first) == request::Hello::Partial && first.len() < 5 + (1 << 14) {
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

/// The one line a refused client reads.
fn refused_line(host: &str, port: u16, refusal: &Refusal) -> String {
    let hint = match refusal {
        Refusal::NotListed => format!(" (isolate run --allow-net {host}:{port} adds it for a run)"),
        _ => String::new(),
    };
    format!("refused {host}:{port}: {refusal}{hint}")
}

/// The first of `addrs` that answers.
fn connect(addrs: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for addr in addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e,
        }
    }
    Err(last)
}
