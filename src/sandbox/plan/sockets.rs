//! What the seccomp layer holds the job's sockets to, as the plan gives it: the `Sockets` of a
//! policy, their meet when two policies hold one job, and the `Route` of a domain allowlist. The
//! filter is sandbox/seccomp/'s, the decisions the supervisor's broker's.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What the seccomp layer holds the job's sockets to (sandbox/seccomp/ for the filter, the
/// supervisor's broker for the calls it hands over).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sockets {
    /// Listeners outside the job it may connect to: canonical socket files, or directories (every
    /// socket beneath).
    pub unix_allowed: Vec<PathBuf>,
    /// Datagram unix sockets may be created (they can address any path).
    pub unix_datagram: bool,
    /// Abstract unix sockets outside the job are refused (the policy's scope; the broker enforces it
    /// on the connects it makes, which Landlock does not see).
    pub abstract_scoped: bool,
    /// UDP sockets may be created.
    pub udp: bool,
    /// TCP ports the job may connect to; `None` when TCP connect is not restricted.
    pub tcp_connect: Option<Vec<u16>>,
    /// TCP ports the job may bind; `None` when TCP bind is not restricted.
    pub tcp_bind: Option<Vec<u16>>,
    /// With a domain allowlist: the only TCP destinations (`tcp_connect` then lists their ports).
    #[serde(default)]
    pub route: Option<Route>,
    /// Who judges the calls the filter cannot decide alone.
    #[serde(default)]
    pub judge: Judge,
    /// The job has a network namespace of its own, with only loopback (the namespaces tier): its
    /// sockets reach nothing of the machine's network, and the broker reads its listeners there.
    #[serde(default)]
    pub private_network: bool,
    /// The job has an IPC namespace of its own (the namespaces tier): System V IPC and POSIX
    /// message queues are its own, and allowed.
    #[serde(default)]
    pub private_ipc: bool,
    /// The broker judges every signal to another process (a kernel without Landlock's signal
    /// scope): allowed to the job's own processes only.
    #[serde(default)]
    pub judge_signals: bool,
}

/// Who judges the calls a seccomp filter cannot decide by their arguments (connect, listen, a
/// pty's other end).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judge {
    /// The job's own supervisor, through the filter's listener.
    #[default]
    Supervisor,
    /// The supervisor of the job this one runs inside (job/nest.rs): the kernel allows one
    /// listener in a filter chain, and the outer job's filter, which still runs, hands those calls
    /// to it, which judges them under the outer policy and makes them itself (outside this job's
    /// Landlock domain). This filter then hands nothing over, and refuses what the outer judge
    /// would let through that this job may not have: unix sockets other than pairs (a socket
    /// served by another process of the outer job counts as the outer job's own there), and TCP
    /// sockets when its TCP is none (`unnestable` refuses anything between open and none).
    OuterJob,
}

/// Where a job with a domain allowlist may connect over TCP: isolate's proxy, and its own servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The proxy's port on 127.0.0.1 (exactly that address); `None` until the supervisor has
    /// started it, and then nothing is reachable.
    pub proxy: Option<u16>,
    /// The job's own ports (its `ISOLATE_PORT` block), on any loopback address.
    pub own: Vec<u16>,
    /// Local destinations the allowlist names by address (a gateway of the user's on loopback or
    /// a private address): reached directly, exactly these.
    #[serde(default)]
    pub named: Vec<std::net::SocketAddr>,
}

impl Sockets {
    /// Nothing outside the job is reachable: for isolate's own sandboxed helpers (the import's
    /// reading side), which need no network.
    pub fn closed() -> Sockets {
        Sockets {
            unix_allowed: Vec::new(),
            unix_datagram: false,
            abstract_scoped: true,
            udp: false,
            tcp_connect: Some(Vec::new()),
            tcp_bind: Some(Vec::new()),
            route: None,
            judge: Judge::Supervisor,
            private_network: false,
            private_ipc: false,
            judge_signals: false,
        }
    }

    /// What both `self` and `other` allow.
    pub fn meet(&self, other: &Sockets) -> Sockets {
        let within = |p: &PathBuf, rules: &[PathBuf]| {
            rules
                .iter()
                .any(|q| p == q || (p.starts_with(q) && q.is_dir()))
        };
        let mut unix_allowed: Vec<PathBuf> = self
            .unix_allowed
            .iter()
            .filter(|p| within(p, &other.unix_allowed))
            .cloned()
            .collect();
        for p in &other.unix_allowed {
            if within(p, &self.unix_allowed) && !unix_allowed.contains(p) {
                unix_allowed.push(p.clone());
            }
        }
        let ports = |a: &Option<Vec<u16>>, b: &Option<Vec<u16>>| match (a, b) {
            (None, b) => b.clone(),
            (a, None) => a.clone(),
            (Some(a), Some(b)) => Some(a.iter().filter(|p| b.contains(p)).copied().collect()),
        };
        Sockets {
            unix_allowed,
            unix_datagram: self.unix_datagram && other.unix_datagram,
            abstract_scoped: self.abstract_scoped || other.abstract_scoped,
            udp: self.udp && other.udp,
            tcp_connect: ports(&self.tcp_connect, &other.tcp_connect),
            tcp_bind: ports(&self.tcp_bind, &other.tcp_bind),
            // One proxy per job: a route narrows to itself (its ports are in `tcp_connect` too).
            route: self.route.clone().or_else(|| other.route.clone()),
            judge: match (self.judge, other.judge) {
                (Judge::Supervisor, Judge::Supervisor) => Judge::Supervisor,
                _ => Judge::OuterJob,
            },
            private_network: self.private_network && other.private_network,
            private_ipc: self.private_ipc && other.private_ipc,
            judge_signals: self.judge_signals || other.judge_signals,
        }
    }

    /// TCP is fully open: the protocols that bypass Landlock's TCP hooks need no refusal.
    pub fn tcp_open(&self) -> bool {
        self.tcp_connect.is_none() && self.tcp_bind.is_none()
    }

    /// TCP is wholly refused: no port to connect to, none to bind.
    pub fn tcp_closed(&self) -> bool {
        let none = |ports: &Option<Vec<u16>>| ports.as_ref().is_some_and(Vec::is_empty);
        none(&self.tcp_connect) && none(&self.tcp_bind)
    }

    /// Why a job inside another job cannot be held to these sockets, if it cannot. Its connects
    /// are the outer job's broker's to judge, under the outer policy, and the broker makes them
    /// itself, outside this job's Landlock domain: what this job's own filter cannot refuse by a
    /// call's arguments alone it cannot be held to. So its TCP is open or none, never a list of
    /// ports or a domain allowlist.
    pub fn unnestable(&self) -> Option<&'static str> {
        // A route with TCP wholly closed is `offline`'s loopback of the job's own: closed to the
        // outer judge (its filter refuses TCP sockets), nestable as before.
        if self.route.is_some() && !self.tcp_closed() {
            Some(
                "a job inside another job cannot have a domain allowlist: the outer job's \
                 supervisor judges its connects, under the outer policy, and no proxy of its own \
                 would be the only way out; give it a policy whose network is open or none \
                 (`--policy default`: it then reaches what the outer job's policy lets it reach, \
                 or `--policy offline`)",
            )
        } else if !self.tcp_open() && !self.tcp_closed() {
            Some(
                "a job inside another job cannot have TCP port lists: the outer job's supervisor \
                 makes its connects, outside its own Landlock domain, under the outer policy; give \
                 it a policy whose TCP is open or none (`--policy offline`)",
            )
        } else {
            None
        }
    }
}
