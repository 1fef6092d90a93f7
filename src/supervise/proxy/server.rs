//! The running proxy ([`Proxy`]): bound to 127.0.0.1, its accepting thread, and its stop, which
//! shuts every connection down once the job has ended. It must never outlive the job's supervisor
//! nor leave a connection open after `stop`.

use std::collections::HashMap;
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::accept::accept;
use super::allow::AllowList;
use super::log::NetLog;
use super::secret::secret;
use crate::error::{Error, Result};
use crate::job::record::NetworkCounts;
use crate::supervise::namespaces::Holder;

/// How long `stop` waits for the connections it shut down to be logged.
const DRAIN: Duration = Duration::from_secs(2);

/// A running proxy.
pub struct Proxy {
    addr: SocketAddr,
    /// The accepting thread's listener, to shut down at `stop`.
    listener: TcpListener,
    /// The secret the job's URL carries; `None` for a listener in the job's own network namespace,
    /// which nobody else reaches.
    secret: Option<String>,
    shared: Arc<Shared>,
    accepting: Option<std::thread::JoinHandle<()>>,
}

pub(super) struct Shared {
    pub(super) allow: AllowList,
    /// `isolate:<secret>`, as the client's credentials must be (`None`: none asked for).
    pub(super) credentials: Option<Vec<u8>>,
    /// The job's network namespace, where its own servers are (`None`: the machine's loopback).
    pub(super) inside: Option<&'static Holder>,
    pub(super) log: NetLog,
    pub(super) stopping: AtomicBool,
    /// Both ends of every connection being served, to shut down at `stop`.
    pub(super) live: Mutex<HashMap<u64, Vec<TcpStream>>>,
    pub(super) next: AtomicU64,
}

/// Where the proxy listens.
pub enum Listen {
    /// On the machine's 127.0.0.1, this port (0: one of the kernel's choosing); its clients must
    /// give the job's secret.
    Port(u16),
    /// On 127.0.0.1 of the job's own network namespace (a port of the kernel's choosing), which
    /// only the job reaches: no secret.
    Inside(&'static Holder),
}

impl Proxy {
    /// Listens as `listen` says and starts serving `allow` (its `proxy` is set here), logging to
    /// `log` (`<job_dir>/net.log`) when given.
    pub fn start(mut allow: AllowList, listen: Listen, log: Option<&Path>) -> Result<Proxy> {
        let port = match listen {
            Listen::Port(port) => port,
            Listen::Inside(_) => 0,
        };
        let cannot = |source| Error::ProxyStart { port, source };
        let (listener, inside) = match listen {
            Listen::Port(port) => (TcpListener::bind((Ipv4Addr::LOCALHOST, port)), None),
            Listen::Inside(holder) => (
                holder.listen_tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
                Some(holder),
            ),
        };
        let listener = listener.map_err(cannot)?;
        let addr = listener.local_addr().map_err(cannot)?;
        allow.proxy = Some(addr);
        let log = match log {
            Some(path) => NetLog::open(path).map_err(|e| Error::io("cannot open", path, e))?,
            None => NetLog::counting(),
        };
        let secret = match inside {
            Some(_) => None,
            None => Some(secret().map_err(cannot)?),
        };
        let shared = Arc::new(Shared {
            allow,
            credentials: secret
                .as_ref()
                .map(|secret| format!("isolate:{secret}").into_bytes()),
            inside,
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

    /// The URL the job's tools are given: `http://isolate:<secret>@127.0.0.1:<port>`, or without
    /// the secret inside the job's network namespace.
    pub fn url(&self) -> String {
        match &self.secret {
            Some(secret) => format!("http://isolate:{secret}@{}", self.addr),
            None => format!("http://{}", self.addr),
        }
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
