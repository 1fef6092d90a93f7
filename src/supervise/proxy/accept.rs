//! The proxy's accepting thread: a thread per connection, at most `CONNECTIONS_MAX` at once (one
//! more is answered 503 and closed), each registered so that `stop` can shut it down.

use std::io::Write;
use std::net::TcpListener;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::response::response;
use super::serve::serve;
use super::server::Shared;

/// Connections served at once; one more is closed at once.
const CONNECTIONS_MAX: usize = 128;

pub(super) fn accept(listener: TcpListener, shared: Arc<Shared>) {
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
