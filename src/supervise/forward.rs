//! Forwarding between the machine's loopback and a job's own network namespace (the namespaces
//! tier): its `ISOLATE_PORT` block, served on the machine's 127.0.0.1 and `[::1]` once the job
//! listens there and forwarded into the job's loopback, so that a dev server the job starts opens
//! in the user's browser; and
//! each local destination its allowlist names by address (`--allow-net 127.0.0.1:11434`, a model
//! gateway of the user's), served on that address inside the job's namespace and forwarded to the
//! machine's, so that every client reaches it directly, proxy or not. Each connection is relayed
//! by the proxy's relay; a side that cannot be reached closes the other.
//!
//! It must never forward anywhere but the one address each listener was made for, and it ends
//! with the job (`stop`).

use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::supervise::namespaces::Holder;

/// How long a connect to the machine's side may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Which way a listener forwards.
#[derive(Clone, Copy)]
enum Way {
    /// From the machine's loopback into the job's namespace, to the same port.
    Into(&'static Holder, SocketAddr),
    /// From the job's namespace to the machine's address.
    Out(SocketAddr),
}

/// The job's forwarders, running.
pub struct Forwards {
    listeners: Vec<TcpListener>,
    stopping: Arc<AtomicBool>,
    live: Arc<Mutex<Vec<TcpStream>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

/// The ports of the job's block not forwarded yet, forwarded the first time the job listens on
/// one (`listening`): a port of the block is taken on the machine only once the job serves there.
struct Block {
    holder: &'static Holder,
    waiting: Vec<u16>,
    forwards: Forwards,
}

static BLOCK: Mutex<Option<Block>> = Mutex::new(None);

/// The job listens on `port` in its own network namespace (the broker saw its listen succeed): a
/// port of its block is forwarded from the machine's loopback from now on.
pub fn listening(port: u16) {
    let mut block = BLOCK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(block) = block.as_mut() else {
        return;
    };
    let Some(at) = block.waiting.iter().position(|&p| p == port) else {
        return;
    };
    block.waiting.remove(at);
    let holder = block.holder;
    for ip in [
        std::net::IpAddr::from([127, 0, 0, 1]),
        std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
    ] {
        let addr = SocketAddr::new(ip, port);
        if let Ok(listener) = TcpListener::bind(addr) {
            block.forwards.serve(listener, Way::Into(holder, addr));
        }
    }
}

impl Forwards {
    /// The forwarders of a job in its own network namespace: `ports` (its block) from the
    /// machine's loopback into it, and `named` (local destinations its allowlist names by
    /// address) from inside it to the machine. A listener that cannot be made is skipped: a port
    /// of the block someone else holds on the machine, an address the namespace lacks.
    pub fn start(holder: &'static Holder, ports: &[u16], named: &[SocketAddr]) -> Forwards {
        let mut forwards = Forwards {
            listeners: Vec::new(),
            stopping: Arc::new(AtomicBool::new(false)),
            live: Arc::new(Mutex::new(Vec::new())),
            threads: Vec::new(),
        };
        *BLOCK.lock().unwrap_or_else(|e| e.into_inner()) = Some(Block {
            holder,
            waiting: ports.to_vec(),
            forwards: Forwards {
                listeners: Vec::new(),
                stopping: Arc::clone(&forwards.stopping),
                live: Arc::clone(&forwards.live),
                threads: Vec::new(),
            },
        });
        for &addr in named {
            if let Ok(listener) = holder.listen_tcp(addr) {
                forwards.serve(listener, Way::Out(addr));
            }
        }
        forwards
    }

    fn serve(&mut self, listener: TcpListener, way: Way) {
        let Ok(kept) = listener.try_clone() else {
            return;
        };
        let stopping = Arc::clone(&self.stopping);
        let live = Arc::clone(&self.live);
        let spawned = std::thread::Builder::new()
            .name("isolate-forward".into())
            .spawn(move || accept(listener, way, &stopping, &live));
        if let Ok(thread) = spawned {
            self.listeners.push(kept);
            self.threads.push(thread);
        }
    }

    /// Stops accepting and shuts every forwarded connection down (the job has ended).
    pub fn stop(mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(block) = BLOCK.lock().unwrap_or_else(|e| e.into_inner()).take() {
            self.listeners.extend(block.forwards.listeners);
            self.threads.extend(block.forwards.threads);
        }
        for listener in &self.listeners {
            // SAFETY: shutdown of a descriptor owned here wakes its blocked accept (EINVAL).
            unsafe { libc::shutdown(listener.as_raw_fd(), libc::SHUT_RDWR) };
        }
        for thread in self.threads {
            let _ = thread.join();
        }
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        for stream in live.iter() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn accept(
    listener: TcpListener,
    way: Way,
    stopping: &AtomicBool,
    live: &Arc<Mutex<Vec<TcpStream>>>,
) {
    crate::supervise::broker::quiet();
    for client in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let live = Arc::clone(live);
        let _ = std::thread::Builder::new()
            .name("isolate-forward-conn".into())
            .spawn(move || {
                let upstream = match way {
                    Way::Into(holder, addr) => holder.connect_tcp(addr),
                    Way::Out(addr) => TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT),
                };
                let Ok(upstream) = upstream else {
                    let _ = client.shutdown(Shutdown::Both);
                    return;
                };
                if let (Ok(a), Ok(b), Ok(mut live)) =
                    (client.try_clone(), upstream.try_clone(), live.lock())
                {
                    live.push(a);
                    live.push(b);
                }
                let _ = client.set_nodelay(true);
                let _ = upstream.set_nodelay(true);
                crate::supervise::proxy::relay(&client, &upstream, &[]);
            });
    }
}
