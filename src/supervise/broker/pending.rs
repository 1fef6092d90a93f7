//! The broker's thread before the job runs ([`Pending`]): it builds the seccomp filter and hands it
//! to the job's first process while that restricts itself, then waits for its listener and serves
//! it. It
//! must never hold up the job's start, nor serve a job that did not start.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use nix::unistd::Pid;

use super::serve::serve;
use super::{listeners, quiet, Broker, Counts};
use crate::sandbox::notify::Listener;
use crate::sandbox::plan::Sockets;
use crate::sandbox::{handover, seccomp};

/// A broker's thread, started just after the job's first process is forked (after, so that the
/// fork is of a supervisor with no other thread): it builds the seccomp filter and sends it while
/// that process restricts itself (so that the filter is not on the job's way to its first
/// instruction), then waits for the listener.
pub struct Pending {
    listener: std::sync::mpsc::SyncSender<(OwnedFd, Option<std::path::PathBuf>)>,
    counts: Arc<Counts>,
    /// Why the filter could not be built (the helper then fails, saying it got none).
    failed: Arc<Mutex<Option<String>>>,
}

impl Pending {
    /// The thread that will answer for the job whose processes are the descendants of `root`;
    /// `status` is the supervisor's end of the helper's status socket.
    pub fn prepare(sockets: Sockets, root: Pid, status: OwnedFd) -> std::io::Result<Pending> {
        let counts = Arc::new(Counts::default());
        let failed = Arc::new(Mutex::new(None));
        let (serving, why) = (Arc::clone(&counts), Arc::clone(&failed));
        let (listener, arrives) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("isolate-broker".into())
            .spawn(move || {
                quiet();
                let bpf = seccomp::program(&sockets);
                // An empty filter makes the helper fail, saying so; the reason is kept here.
                let _ = handover::send_filter(&status, bpf.as_deref().unwrap_or_default());
                drop(status);
                if let Err(e) = bpf {
                    *why.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
                    return;
                }
                // Dropped without a listener (the job did not start): nothing to serve.
                if let Ok((fd, cgroup)) = arrives.recv() {
                    let members = listeners::Members { root, cgroup };
                    serve(Arc::new(Listener::new(fd)), sockets, members, serving);
                }
            })?;
        Ok(Pending {
            listener,
            counts,
            failed,
        })
    }

    /// Why the filter could not be built, once the helper has ended.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Starts answering on `listener`, for a job whose processes are in `cgroup` when it has one
    /// of its own.
    pub fn start(self, listener: OwnedFd, cgroup: Option<std::path::PathBuf>) -> Broker {
        let _ = self.listener.send((listener, cgroup));
        Broker {
            counts: self.counts,
        }
    }
}
