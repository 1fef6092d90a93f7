//! One connection's lines in the proxy's log: where a request goes ([`Target`]) and each decision
//! on it, with the bytes relayed. A request without the job's secret names no destination here.

use super::log::{self, Decision, Entry};
use super::server::Shared;

/// Where a request goes, as its log line names it.
pub(super) struct Target<'a> {
    pub(super) method: &'a str,
    pub(super) host: &'a str,
    pub(super) port: u16,
}

/// The lines of one connection in the proxy's log.
pub(super) struct Lines<'a> {
    pub(super) shared: &'a Shared,
    pub(super) peer: Option<String>,
}

impl Lines<'_> {
    /// One decision about `to`, with the bytes relayed each way.
    pub(super) fn entry(
        &self,
        to: &Target,
        decision: Decision,
        reason: String,
        (up, down): (u64, u64),
    ) {
        self.shared.log.record(&Entry {
            time: log::now(),
            client: self.peer.clone(),
            method: to.method,
            host: to.host,
            port: to.port,
            decision,
            reason,
            bytes_up: up,
            bytes_down: down,
        })
    }

    /// A refusal that names no destination.
    pub(super) fn refused(&self, reason: String) {
        let nowhere = Target {
            method: "-",
            host: "",
            port: 0,
        };
        self.entry(&nowhere, Decision::Refused, reason, (0, 0));
    }
}
