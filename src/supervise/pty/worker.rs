//! A relay thread ([`Worker`]) that reports its result on a channel, so that it can be waited for
//! with a timeout; one that does not end in time is left to end on its own, never joined blindly.

use std::io;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Stack of a relay thread: the buffers live on the heap and nothing recurses.
const THREAD_STACK: usize = 128 * 1024;

/// A relay thread that reports its result on a channel, so it can be waited for with a timeout.
pub struct Worker<T> {
    thread: thread::JoinHandle<()>,
    done: mpsc::Receiver<T>,
}

impl<T: Send + 'static> Worker<T> {
    pub fn spawn(name: &str, work: impl FnOnce() -> T + Send + 'static) -> io::Result<Worker<T>> {
        let (tx, done) = mpsc::sync_channel(1);
        let thread = thread::Builder::new()
            .name(name.into())
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let _ = tx.send(work());
            })?;
        Ok(Worker { thread, done })
    }

    /// The thread's result, if it ends within `timeout`; otherwise the thread is left to end on
    /// its own.
    pub fn wait(self, timeout: Duration) -> Option<T> {
        let result = self.done.recv_timeout(timeout).ok()?;
        let _ = self.thread.join();
        Some(result)
    }
}
