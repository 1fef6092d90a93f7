//! The `Rules`: the Landlock rules and resource limits of one job, in the form the pre-exec helper
//! needs after exec, made from the resolved paths and what the kernel can enforce of the rest of
//! the policy. Nothing here touches the filesystem but `carve`'s listing of carved directories.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::carve::carve;
use super::devices::present;
use super::limits::limits;
use super::Limit;
use super::{Access, Feature, FeatureState, Judge, Outcome, Resolved, Route, Sockets, DEVICES};
use crate::sandbox::namespaces::Namespaces;
use crate::sandbox::policy::Policy;
use crate::sandbox::probe;

/// The system's programs and libraries, which isolate's own readers read (`Rules::own_reader`).
const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
];

/// The Landlock rules and resource limits for one job, in the form the helper needs after exec.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rules {
    /// The ABI to build the ruleset for (the kernel's, as probed by the supervisor).
    pub abi: u32,
    /// Readable and executable, with everything beneath (files get the file rights only).
    pub read: Vec<PathBuf>,
    /// Directories that may be listed, with everything beneath, and nothing read: `/` when a read
    /// rule over it is carved around `/dev` (its other entries are in `read`).
    #[serde(default)]
    pub list: Vec<PathBuf>,
    /// Writable directories (every right but creating devices and device ioctls).
    pub write: Vec<PathBuf>,
    /// The worktree: writable like `write`, but no FIFO may be made in it.
    #[serde(default)]
    pub worktree: Vec<PathBuf>,
    /// Single writable files.
    pub write_files: Vec<PathBuf>,
    /// Devices the job uses whole, ioctls included: `/dev/null`, `/dev/ptmx`, `/dev/tty`, and its
    /// own terminal in interactive mode (`Access::Device`).
    #[serde(default)]
    pub devices: Vec<PathBuf>,
    /// TCP ports the job may connect to; `None` when TCP connect is not restricted.
    #[serde(default)]
    pub connect_tcp: Option<Vec<u16>>,
    /// TCP ports the job may bind; `None` when TCP bind is not restricted.
    #[serde(default)]
    pub bind_tcp: Option<Vec<u16>>,
    pub scope_signals: bool,
    pub scope_abstract_unix: bool,
    /// Set with setrlimit (soft and hard) before anything else.
    #[serde(default)]
    pub limits: Vec<Limit>,
    /// The seccomp layer; `None` where the kernel lacks it and the policy made it best effort.
    #[serde(default)]
    pub sockets: Option<Sockets>,
    /// A second policy's rules the job is held to as well (`--resume` with another `--policy`):
    /// Landlock stacks them, so the job gets what both allow.
    #[serde(default)]
    pub narrowed: Option<Box<Rules>>,
    /// The namespaces tier: the namespaces the job enters before Landlock (`None`: the
    /// Landlock-only tier).
    #[serde(default)]
    pub namespaces: Option<Namespaces>,
}

impl Rules {
    /// Rules that let read (and list) beneath `read` and nothing else: no write anywhere, no TCP
    /// rule, no scope, no limit, no seccomp layer.
    pub fn reading(abi: u32, read: Vec<PathBuf>) -> Rules {
        Rules {
            abi,
            read,
            list: Vec::new(),
            write: Vec::new(),
            worktree: Vec::new(),
            write_files: Vec::new(),
            devices: Vec::new(),
            connect_tcp: None,
            bind_tcp: None,
            scope_signals: false,
            scope_abstract_unix: false,
            limits: Vec::new(),
            sockets: None,
            narrowed: None,
            namespaces: None,
        }
    }

    /// The rules of one of isolate's own readers of what a job wrote (the import's reading side,
    /// the look at a live job's repository): the system and `read` to read, `write` to write,
    /// `/dev/null`, no TCP, scoped signals and abstract sockets, every socket closed where the
    /// seccomp layer is, and `limit`. Only paths that exist, canonical.
    pub fn own_reader(
        abi: u32,
        read: &[PathBuf],
        write: Vec<PathBuf>,
        limit: Limit,
        seccomp: bool,
    ) -> Rules {
        let read = SYSTEM
            .iter()
            .map(PathBuf::from)
            .chain(read.iter().cloned())
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        let no_tcp = (abi >= probe::NETWORK_ABI).then(Vec::new);
        Rules {
            write,
            devices: vec![PathBuf::from("/dev/null")],
            connect_tcp: no_tcp.clone(),
            bind_tcp: no_tcp,
            scope_signals: abi >= probe::SCOPES_ABI,
            scope_abstract_unix: abi >= probe::SCOPES_ABI,
            limits: vec![limit],
            sockets: seccomp.then(Sockets::closed),
            ..Rules::reading(abi, read)
        }
    }

    /// These rules held also to `other`'s: its Landlock ruleset is added on top (the kernel then
    /// allows what both allow), its limits are set too (each only lowers), and the seccomp layer
    /// gets what both allow.
    pub fn narrowed_by(mut self, mut other: Rules) -> Rules {
        self.sockets = match (self.sockets.take(), other.sockets.take()) {
            (Some(a), Some(b)) => Some(a.meet(&b)),
            (a, b) => a.or(b),
        };
        self.narrowed = Some(Box::new(other));
        self
    }

    /// The job's TCP, under a domain allowlist, to the proxy on 127.0.0.1:`proxy` and to its own
    /// `own` ports on loopback: Landlock's connect rule gets those ports, the seccomp layer's broker
    /// the addresses. Rules without an allowlist are left as they are.
    pub fn route_through(&mut self, proxy: u16, own: &[u16], named: &[std::net::SocketAddr]) {
        // (A narrowing policy's rules lend their seccomp part to the first's, `narrowed_by`: its
        // Landlock connect rule, empty when it has an allowlist too, stays as it is, and matters
        // only where the seccomp layer, which makes every connect for the job, is missing.)
        let ports: Vec<u16> = std::iter::once(proxy).chain(own.iter().copied()).collect();
        let Some(sockets) = self.sockets.as_mut() else {
            return;
        };
        let Some(route) = sockets.route.as_mut() else {
            return;
        };
        route.proxy = Some(proxy);
        route.own = own.to_vec();
        route.named = named.to_vec();
        sockets.tcp_connect = Some(ports.clone());
        if self.connect_tcp.is_some() {
            self.connect_tcp = Some(ports);
        }
    }

    /// The job's own terminal, writable and controllable under every ruleset the job is held to.
    pub fn add_devices(&mut self, paths: &[PathBuf]) {
        self.devices.extend(paths.iter().cloned());
        if let Some(n) = self.narrowed.as_mut() {
            n.add_devices(paths);
        }
    }
}

/// The rules of resolved paths, with what the kernel can enforce of the rest of the policy.
pub(crate) fn rules(
    policy: &Policy,
    abi: u32,
    resolved: &[Resolved],
    states: &[FeatureState],
) -> Rules {
    let enforced = |f: Feature| states.iter().any(|s| s.feature == f && s.enforced);
    let mut read = Vec::new();
    let mut write = Vec::new();
    let mut write_files = Vec::new();
    let mut worktree = Vec::new();
    let mut unix_allowed = Vec::new();
    let mut denied = Vec::new();
    // Each path once per list, in the order first met (a set beside the lists: a policy denies
    // ~150 paths, and comparing each with all before it was most of this function).
    let mut seen: HashSet<(u8, &Path)> = HashSet::new();
    for r in resolved {
        let Some(path) = &r.path else { continue };
        if !matches!(r.outcome, Outcome::Granted | Outcome::Created) {
            continue;
        }
        let (n, list) = match r.access {
            Access::Read => (0, &mut read),
            // Only what a read rule over /dev becomes, never written in a policy.
            Access::List => continue,
            Access::Write => (1, &mut write),
            Access::Worktree => (2, &mut worktree),
            Access::WriteFile => (3, &mut write_files),
            Access::Connect => (4, &mut unix_allowed),
            // Policies name no devices: isolate's own list, and the job's terminal.
            Access::Device => continue,
            Access::Deny => (5, &mut denied),
        };
        if seen.insert((n, path.as_path())) {
            list.push(path.clone());
        }
    }
    let (read, list) = carve(read, &denied, &crate::job::nest::outer_grants());
    let network = enforced(Feature::Network);
    let scopes = enforced(Feature::Scopes);
    // Landlock's own scopes, where the kernel has them; below, the seccomp layer holds them.
    let landlock_scopes = scopes && abi >= probe::SCOPES_ABI;
    let net = &policy.network;
    // A domain allowlist: TCP to the proxy and the job's own ports only (both known once the
    // supervisor has started the proxy: `Rules::route_through`; until then, nothing), no UDP.
    let proxied = net.proxied();
    let connect = match proxied {
        true => Some(Vec::new()),
        false => net.connect.allowed().map(<[u16]>::to_vec),
    };
    // No TCP at all (`offline`): with the seccomp layer, the job's own servers on loopback still
    // work, judged by the broker (a listen on loopback only, a connect to a listener only the job
    // holds); Landlock's bind rule then leaves binding to it.
    let seccomp = enforced(Feature::Seccomp);
    let closed = net.connect.allowed() == Some(&[][..]) && net.bind.allowed() == Some(&[][..]);
    let loopback_only = seccomp && closed && !proxied;
    let sockets = seccomp.then(|| Sockets {
        unix_allowed,
        unix_datagram: net.unix_datagram.allowed(),
        abstract_scoped: policy.scopes.abstract_unix_sockets,
        udp: net.udp.allowed() && !proxied,
        tcp_connect: connect.clone(),
        tcp_bind: net.bind.allowed().map(<[u16]>::to_vec),
        route: (proxied || loopback_only).then(|| Route {
            proxy: None,
            own: Vec::new(),
            named: Vec::new(),
        }),
        judge: Judge::Supervisor,
        private_network: false,
        private_ipc: false,
        judge_signals: policy.scopes.signals && !landlock_scopes,
    });
    let bind_tcp = match loopback_only {
        true => None,
        false => policy.network.bind.allowed().map(<[u16]>::to_vec),
    };
    Rules {
        abi,
        read,
        list,
        write,
        worktree,
        write_files,
        devices: present(&DEVICES),
        connect_tcp: network.then_some(connect).flatten(),
        bind_tcp: network.then_some(bind_tcp).flatten(),
        scope_signals: landlock_scopes && policy.scopes.signals,
        scope_abstract_unix: landlock_scopes && policy.scopes.abstract_unix_sockets,
        limits: limits(&policy.limits),
        sockets,
        narrowed: None,
        namespaces: None,
    }
}
