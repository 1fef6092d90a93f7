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

/// How long `stop` waits for the connections it shut down to be logged.
const DRAIN: Duration = Duration::from_secs(2);

/// A running proxy.
pub struct Proxy {
    addr: SocketAddr,
    /// The accepting thread's listener, to shut down at `stop`.
    listener: TcpListener,
    secret: String,
    shared: Arc<Shared>,
    accepting: Option<std::thread::JoinHandle<()>>,
}

pub(super) struct Shared {
    pub(super) allow: AllowList,
    /// `isolate:<secret>`, as the client's credentials must be.
    pub(super) credentials: Vec<u8>,
    pub(super) log: NetLog,
    pub(super) stopping: AtomicBool,
    /// Both ends of every connection being served, to shut down at `stop`.
    pub(super) live: Mutex<HashMap<u64, Vec<TcpStream>>>,
    pub(super) next: AtomicU64,
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
