//! The plan: a policy resolved for one job on this kernel. Every path is expanded (`~`, `$VAR`),
//! made absolute and canonical before it becomes a rule, so a symlink swapped in later cannot move a
//! rule. Each Landlock feature the policy asks for is checked against the kernel's ABI: a required
//! one the kernel lacks fails the run (fail closed), a best-effort one becomes a gap. The `Rules` are
//! what the pre-exec helper enforces; the gaps are what the report, `doctor` and `policy show` say
//! about them. `preview` is the same resolution without a job, for `policy show` and `doctor`.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::job::record::SandboxReport;
use crate::sandbox::made::Made;
use crate::sandbox::policy::{Level, Loaded, Missing, PathRule, Policy};
use crate::sandbox::probe;

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
}

impl Rules {
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
    pub fn route_through(&mut self, proxy: u16, own: &[u16]) {
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

/// What the seccomp layer holds the job's sockets to (sandbox/seccomp.rs for the filter, the
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
}

/// Where a job with a domain allowlist may connect over TCP: isolate's proxy, and its own servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// The proxy's port on 127.0.0.1 (exactly that address); `None` until the supervisor has
    /// started it, and then nothing is reachable.
    pub proxy: Option<u16>,
    /// The job's own ports (its `ISOLATE_PORT` block), on any loopback address.
    pub own: Vec<u16>,
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
        }
    }

    /// TCP is fully open: the protocols that bypass Landlock's TCP hooks need no refusal.
    pub fn tcp_open(&self) -> bool {
        self.tcp_connect.is_none() && self.tcp_bind.is_none()
    }
}

/// What the pre-exec helper does before it execs CMD.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// `None` with `--no-sandbox`.
    pub rules: Option<Rules>,
    /// Descriptor on which the helper reports why CMD could not be executed.
    pub status_fd: i32,
    /// Descriptor the helper reads one byte from before it execs CMD (the supervisor's release).
    pub go_fd: i32,
    /// Interactive mode: CMD gets its own process group on its terminal, under a monitor.
    #[serde(default)]
    pub job_control: bool,
}

/// A resource limit of the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    pub resource: Resource,
    pub value: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    OpenFiles,
    Processes,
    CoreSize,
    AddressSpace,
}

/// The paths a job needs whatever its policy says.
pub struct Job<'a> {
    /// Its worktree: writable, but no FIFO may be made there (isolate reads the worktree after the
    /// job, and opening a FIFO waits for a writer).
    pub worktree: Option<&'a Path>,
    /// Its TMPDIR.
    pub writable: &'a [PathBuf],
    /// The project (its top level, git directory, objects and hooks: the worktree borrows them), or
    /// without `--worktree` the current directory.
    pub readable: &'a [PathBuf],
    /// `--allow-write`.
    pub allow_write: &'a [PathBuf],
    /// The command's own installation (sandbox/agent.rs), readable when the policy says
    /// `installation = true`.
    pub installation: &'a [PathBuf],
}

/// A kernel feature a policy may ask for: a Landlock ABI, or the seccomp layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    WriteContainment,
    Network,
    DeviceIoctls,
    Scopes,
    /// Unix socket connects, UDP, MPTCP, TCP fast open, raw sockets (sandbox/seccomp.rs).
    Seccomp,
}

impl Feature {
    pub const ALL: [Feature; 5] = [
        Feature::WriteContainment,
        Feature::Network,
        Feature::DeviceIoctls,
        Feature::Scopes,
        Feature::Seccomp,
    ];

    /// The Landlock ABI that brought it (`None` for the seccomp layer).
    pub fn abi(self) -> Option<u32> {
        match self {
            Feature::WriteContainment => Some(probe::MIN_ABI),
            Feature::Network => Some(probe::NETWORK_ABI),
            Feature::DeviceIoctls => Some(probe::IOCTL_ABI),
            Feature::Scopes => Some(probe::SCOPES_ABI),
            Feature::Seccomp => None,
        }
    }

    /// The first Linux release with it.
    pub fn linux(self) -> &'static str {
        match self {
            Feature::WriteContainment => "6.2",
            Feature::Network => "6.7",
            Feature::DeviceIoctls => "6.10",
            Feature::Scopes => "6.12",
            Feature::Seccomp => "5.6",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Feature::WriteContainment => "write containment (truncate included)",
            Feature::Network => "tcp connect and bind rules",
            Feature::DeviceIoctls => "ioctl restriction on device files",
            Feature::Scopes => "signal and abstract unix socket scopes",
            Feature::Seccomp => "seccomp layer (unix sockets, udp, tcp bypasses)",
        }
    }

    /// What the kernel must have, in words.
    pub fn needs(self) -> String {
        match self.abi() {
            Some(abi) => format!("Landlock ABI {abi}"),
            None => "seccomp user notification and pidfd_getfd".to_string(),
        }
    }
}

/// What the kernel offers, as isolate sees it (capped by `ISOLATE_LANDLOCK_ABI_MAX` and
/// `ISOLATE_NO_SECCOMP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    pub landlock_abi: Option<u32>,
    pub seccomp: bool,
}

impl Kernel {
    pub fn probe() -> Kernel {
        Kernel {
            landlock_abi: probe::landlock_abi(),
            seccomp: probe::seccomp().is_ok(),
        }
    }

    fn has(self, feature: Feature) -> bool {
        match feature.abi() {
            Some(needs) => self.landlock_abi.is_some_and(|abi| abi >= needs),
            None => self.landlock_abi.is_some() && self.seccomp,
        }
    }
}

/// One feature, for one policy, on this kernel.
#[derive(Debug, Clone, Serialize)]
pub struct FeatureState {
    pub feature: Feature,
    pub description: &'static str,
    /// The Landlock ABI it needs (`null` for the seccomp layer).
    pub needs_abi: Option<u32>,
    /// What the kernel must have, in words.
    pub needs: String,
    /// The kernel (as capped by `ISOLATE_LANDLOCK_ABI_MAX`, `ISOLATE_NO_SECCOMP`) has it.
    pub available: bool,
    /// The policy asks for it.
    pub asked: bool,
    /// Missing, it fails the run (else it is a gap).
    pub required: bool,
    /// Asked and available: the job is held to it.
    pub enforced: bool,
}

/// Every feature, as it stands for `policy` on `kernel`.
pub fn features(policy: &Policy, kernel: Kernel) -> Vec<FeatureState> {
    let net = &policy.network;
    let scopes = &policy.scopes;
    Feature::ALL
        .iter()
        .map(|&feature| {
            let (asked, required) = match feature {
                Feature::WriteContainment => (true, true),
                Feature::Network => (
                    net.connect.allowed().is_some()
                        || net.bind.allowed().is_some()
                        || net.proxied(),
                    policy.compatibility.network == Level::Required,
                ),
                // Part of the pinned rights; older kernels leave device ioctls open (a gap).
                Feature::DeviceIoctls => (true, false),
                Feature::Scopes => (
                    scopes.signals || scopes.abstract_unix_sockets,
                    policy.compatibility.scopes == Level::Required,
                ),
                // Path-named unix sockets are always held to the rule, whatever else is open.
                Feature::Seccomp => (true, policy.compatibility.seccomp == Level::Required),
            };
            let available = kernel.has(feature);
            FeatureState {
                feature,
                description: feature.describe(),
                needs_abi: feature.abi(),
                needs: feature.needs(),
                available,
                asked,
                required,
                enforced: asked && available,
            }
        })
        .collect()
}

/// Fails closed: the kernel's ABI when it can enforce everything `loaded` requires, else the
/// missing feature, what the kernel has and what to do.
pub fn check_kernel(loaded: &Loaded) -> Result<u32> {
    check(loaded, Kernel::probe())
}

fn check(loaded: &Loaded, kernel: Kernel) -> Result<u32> {
    let Some(abi) = kernel.landlock_abi else {
        return Err(Error::SandboxUnavailable(
            "Landlock is not enabled on this kernel".to_string(),
        ));
    };
    for state in features(&loaded.policy, kernel) {
        if !state.asked || !state.required || state.available {
            continue;
        }
        let needs = match state.needs_abi {
            Some(needs) => needs,
            None => {
                return Err(Error::SeccompUnavailable {
                    policy: loaded.name.clone(),
                    why: probe::seccomp().err().unwrap_or("Landlock is missing"),
                })
            }
        };
        if state.feature == Feature::WriteContainment {
            return Err(Error::SandboxUnavailable(format!(
                "write containment needs Landlock ABI {} or newer; this kernel has ABI {abi}",
                probe::MIN_ABI
            )));
        }
        return Err(Error::FeatureUnavailable {
            policy: loaded.name.clone(),
            feature: state.description,
            needs,
            linux: state.feature.linux(),
            abi,
            key: match state.feature {
                Feature::Network => "network",
                _ => "scopes",
            },
        });
    }
    Ok(abi)
}

/// The devices every job may use whole (`Access::Device`): git refuses to start without
/// `/dev/null`; `/dev/ptmx` makes the job's own ptys (their other ends come from the seccomp
/// layer's broker, `TIOCGPTPEER`); `/dev/tty` is the controlling terminal, only ever one of the
/// job's own.
pub const DEVICES: [&str; 3] = ["/dev/null", "/dev/ptmx", "/dev/tty"];

/// What a read rule over `/dev` grants there: devices that hold nothing of anyone's (and the
/// shared-memory directory, which libc's semaphores need). Never the rest, for `/dev` is where the
/// user's terminals are (reading one takes the keystrokes typed there), and input, sound and video
/// devices, which the user's groups may open.
pub const DEVICE_READS: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/shm",
];

/// `read` with `/dev` and every `denied` path carved out of the rules that cover them: such a rule
/// becomes one to list its directory (and every one beneath: names are seen, never contents) and
/// one to read each entry beside the way down to what is denied, at every level; symbolic links
/// among them get no rule of their own (what they point to is judged where it lies). `/dev` gets
/// `DEVICE_READS` instead. A rule naming a denied path itself, or a path inside one, stays: that
/// is a profile re-allowing exactly its agent's own file. `/dev` is carved even from a rule that
/// names it. Returns the read rules and the list-only ones. Entries made after the job started,
/// beside the way down, are not readable to it.
fn carve(read: Vec<PathBuf>, denied: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let dev = Path::new("/dev");
    let mut out = Vec::new();
    let mut list = Vec::new();
    let mut devices = false;
    for rule in read {
        let under: Vec<&Path> = denied
            .iter()
            .map(PathBuf::as_path)
            .chain(std::iter::once(dev))
            .filter(|d| d.starts_with(&rule) && (*d != rule.as_path() || *d == dev))
            .collect();
        if under.is_empty() {
            out.push(rule);
            continue;
        }
        devices |= under.contains(&dev);
        if rule == dev {
            continue;
        }
        carve_dir(&rule, &under, &mut out, &mut list);
    }
    if devices {
        out.extend(
            DEVICE_READS
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.exists()),
        );
    }
    out.sort();
    out.dedup();
    list.sort();
    list.dedup();
    (out, list)
}

/// `dir` listed, its entries read but those denied and those on the way to one (carved in turn).
fn carve_dir(dir: &Path, under: &[&Path], out: &mut Vec<PathBuf>, list: &mut Vec<PathBuf>) {
    list.push(dir.to_path_buf());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if under.contains(&path.as_path()) {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        let deeper: Vec<&Path> = under
            .iter()
            .copied()
            .filter(|d| d.starts_with(&path))
            .collect();
        if deeper.is_empty() {
            out.push(path);
        } else if kind.is_dir() {
            carve_dir(&path, &deeper, out, list);
        }
    }
}

/// How a path rule is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read and execute, everything beneath.
    Read,
    /// List directories, everything beneath; read nothing (`/` around `/dev`).
    List,
    /// Every right but devices, everything beneath.
    Write,
    /// The job's worktree: `Write` without making FIFOs.
    Worktree,
    /// Read, write and truncate one file.
    WriteFile,
    /// A device the job uses whole: read, write, truncate and its ioctls. Only devices whose
    /// ioctls act on nothing but the job's own: `/dev/null` (every ioctl answers ENOTTY),
    /// `/dev/ptmx` (each open makes a new pty, the job's), `/dev/tty` (the caller's controlling
    /// terminal: a job runs in a session of its own, so only ever a terminal of its own), and the
    /// job's own pty in interactive mode.
    Device,
    /// Connect to the unix socket at this path, or to every socket beneath this directory (a rule
    /// of the seccomp layer, not of Landlock).
    Connect,
    /// Never read (a credential store): carved out of every read rule above it (`carve`).
    Deny,
}

/// What became of a path rule on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A rule on `path`.
    Granted,
    /// Created by isolate for this run (`missing = "create"`), then granted.
    Created,
    /// Would be created by a run (`policy show` creates nothing).
    WillCreate,
    /// Missing, skipped (`missing = "note"` or `"ignore"`).
    Skipped,
    /// Missing or unusable: a run fails.
    Failed,
}

/// One path of a policy (or of the job), resolved.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    /// As written in the policy, or what the job's path is (`<worktree>`).
    pub written: String,
    pub access: Access,
    /// Absolute and canonical, when it exists.
    pub path: Option<PathBuf>,
    pub outcome: Outcome,
    /// Why it was skipped, failed or created.
    pub detail: Option<String>,
    /// Whether a skip is said in the start line.
    #[serde(skip)]
    noted: bool,
}

/// Resolves every path rule of `policy`, creating nothing (a `missing = "create"` path that does
/// not exist is `WillCreate`).
fn resolve_policy_paths(policy: &Policy) -> Vec<Resolved> {
    let fs = &policy.filesystem;
    let lists = [
        (&fs.read, Access::Read),
        (&fs.write, Access::Write),
        (&fs.write_files, Access::WriteFile),
        (&policy.network.unix_sockets, Access::Connect),
        (&fs.deny_read, Access::Deny),
    ];
    lists
        .into_iter()
        .flat_map(|(rules, access)| rules.iter().map(move |rule| (rule, access)))
        .map(|(rule, access)| resolve_rule(rule, access))
        .collect()
}

fn resolve_rule(rule: &PathRule, access: Access) -> Resolved {
    let mut out = Resolved {
        written: rule.path.clone(),
        access,
        path: None,
        outcome: Outcome::Failed,
        detail: None,
        noted: false,
    };
    let expanded = match expand(&rule.path) {
        Ok(expanded) => expanded,
        Err(e) => return missing(out, rule.missing, e, None),
    };
    if !Path::new(&expanded).is_absolute() {
        out.detail = Some(format!("{expanded} is not an absolute path"));
        return out;
    }
    if let Some((link, owner)) = foreign_link(Path::new(&expanded)) {
        out.detail = Some(format!(
            "{} is a symbolic link of another user (uid {owner}); isolate follows no other user's \
             link into a rule (one planted in /tmp would aim the rule anywhere)",
            link.display()
        ));
        return out;
    }
    match fs::canonicalize(&expanded) {
        Ok(path) => granted(out, path),
        // A store that is not there yet is denied all the same where its directory is: a job that
        // logs in (`docker login`, `gh auth login`) makes it, and must not read it back.
        Err(e) if out.access == Access::Deny && e.kind() == std::io::ErrorKind::NotFound => {
            let path = Path::new(&expanded);
            let parent = path.parent().and_then(|p| fs::canonicalize(p).ok());
            match (parent, path.file_name()) {
                (Some(parent), Some(name)) if parent.is_dir() => {
                    out.detail = Some("not there yet: unreadable should it appear".into());
                    out.outcome = Outcome::Granted;
                    out.path = Some(parent.join(name));
                    out
                }
                _ => missing(
                    out,
                    rule.missing,
                    format!("{expanded} does not exist"),
                    None,
                ),
            }
        }
        Err(e) => {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => format!("{expanded} does not exist"),
                _ => format!("{expanded}: {e}"),
            };
            missing(out, rule.missing, why, Some(PathBuf::from(expanded)))
        }
    }
}

/// The first symbolic link on the way to `path` owned by neither this user nor root, with its
/// owner: in a directory others may write (`/tmp`), another user's link would aim the rule at
/// whatever they chose (the kernel's `fs.protected_symlinks` is not always on).
fn foreign_link(path: &Path) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::getuid().as_raw();
    let mut walked = PathBuf::new();
    for part in path.components() {
        walked.push(part);
        let Ok(meta) = fs::symlink_metadata(&walked) else {
            return None;
        };
        if meta.file_type().is_symlink() && meta.uid() != me && meta.uid() != 0 {
            return Some((walked, meta.uid()));
        }
    }
    None
}

/// A path that exists: a rule, after checking that its kind fits its access.
fn granted(mut out: Resolved, path: PathBuf) -> Resolved {
    let is_dir = path.is_dir();
    match out.access {
        Access::WriteFile if is_dir => {
            out.outcome = Outcome::Failed;
            out.detail = Some(format!(
                "{} is a directory; list it under write",
                path.display()
            ));
            return out;
        }
        // Landlock grants a single file only the rights that make sense for a file.
        Access::Write if !is_dir => out.access = Access::WriteFile,
        Access::Connect if !is_dir && !is_socket(&path) => {
            out.outcome = Outcome::Failed;
            out.detail = Some(format!(
                "{} is neither a unix socket nor a directory",
                path.display()
            ));
            return out;
        }
        _ => {}
    }
    out.path = Some(path);
    if out.outcome != Outcome::Created {
        out.outcome = Outcome::Granted;
    }
    out
}

fn missing(
    mut out: Resolved,
    missing: Missing,
    why: String,
    expanded: Option<PathBuf>,
) -> Resolved {
    match (missing, expanded) {
        (Missing::Error, _) => {
            out.detail = Some(format!("{why} (a write path must exist)"));
            if out.access == Access::Read {
                out.detail = Some(why);
            }
        }
        (Missing::Note, _) | (Missing::Ignore, _) | (Missing::Create, None) => {
            out.noted = missing != Missing::Ignore;
            out.outcome = Outcome::Skipped;
            out.detail = Some(why);
        }
        // isolate cannot make a socket someone else serves.
        (Missing::Create, Some(_)) if out.access == Access::Connect => {
            out.detail = Some(format!("{why} (missing = \"create\" cannot make a socket)"));
        }
        (Missing::Create, Some(path)) => match creatable(&path) {
            Ok(()) => {
                out.outcome = Outcome::WillCreate;
                out.detail = Some(format!("created (mode 0700) by a run: {why}"));
                out.path = Some(path);
            }
            Err(e) => out.detail = Some(format!("{why}, and cannot be created: {e}")),
        },
    }
    out
}

/// Whether `path` can be made: its nearest existing ancestor is a directory isolate may write.
fn creatable(path: &Path) -> std::result::Result<(), String> {
    let existing = path
        .ancestors()
        .skip(1)
        .find(|a| fs::symlink_metadata(a).is_ok())
        .unwrap_or(Path::new("/"));
    if !existing.is_dir() {
        return Err(format!("{} is not a directory", existing.display()));
    }
    nix::unistd::access(
        existing,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .map_err(|e| format!("{}: {}", existing.display(), e.desc()))
}

/// Creates a `WillCreate` path, each missing parent included (mode 0700; a writable file 0600),
/// recording in `made` what it made; the rule it becomes.
fn create(mut out: Resolved, made: &mut Made) -> std::result::Result<Resolved, String> {
    let Some(path) = out.path.take() else {
        return Ok(out);
    };
    let cannot = |e: std::io::Error| format!("cannot create {}: {e}", path.display());
    let mut missing: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|a| fs::symlink_metadata(a).is_err())
        .collect();
    missing.reverse();
    for dir in missing {
        fs::DirBuilder::new()
            .mode(0o700)
            .create(dir)
            .map_err(cannot)?;
        made.directory(dir);
    }
    if out.access == Access::WriteFile {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(cannot)?;
        made.file(&path);
    } else {
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(cannot)?;
        made.directory(&path);
    }
    let canonical = fs::canonicalize(&path).map_err(cannot)?;
    out.outcome = Outcome::Created;
    out.detail = Some(format!("created {}", path.display()));
    Ok(granted(out, canonical))
}

/// An `--allow-write` path, canonical; one that does not exist is an error saying how to make it.
pub fn allowed_write(path: &Path) -> Result<PathBuf> {
    fs::canonicalize(path).map_err(|e| {
        let shown = path.display();
        Error::Usage(match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "--allow-write {shown}: it does not exist; create it first (mkdir -p {}), or grant \
                 it in a profile of your own as {{ path = \"{shown}\", missing = \"create\" }} under \
                 [filesystem] write",
                crate::controls::shell_quote(path)
            ),
            _ => format!("--allow-write {shown}: {e}"),
        })
    })
}

/// What `build` makes of a policy for one job.
#[derive(Debug)]
pub struct Built {
    /// `None` with `--no-sandbox`.
    pub rules: Option<Rules>,
    /// What the job's record says about them.
    pub report: SandboxReport,
    /// For the start line.
    pub notes: Vec<String>,
    /// The paths created for it (`missing = "create"`), for a run that fails to undo.
    pub made: Made,
}

/// Builds the rules for `job` under `loaded`, on this kernel (see `check_kernel`). Every path is
/// resolved and checked before any `missing = "create"` path is made; a failure while making them
/// undoes what was made.
pub fn build(loaded: &Loaded, job: &Job, no_sandbox: bool) -> Result<Built> {
    let policy = &loaded.policy;
    if no_sandbox {
        let report = SandboxReport {
            enforced: false,
            landlock_abi: probe::landlock_abi(),
            policy: loaded.name.clone(),
            policy_ref: Some(loaded.reference.clone()),
            gaps: vec![NO_SANDBOX.to_string()],
            allow_write: Vec::new(),
            refused: None,
        };
        return Ok(Built {
            rules: None,
            report,
            notes: Vec::new(),
            made: Made::default(),
        });
    }
    let abi = check_kernel(loaded)?;
    let fail = |message: String| Error::Policy {
        source_name: loaded.name.clone(),
        message,
    };

    let mut resolved = resolve_policy_paths(policy);
    let mut allow_write = Vec::new();
    for path in job.allow_write {
        let canonical = allowed_write(path)?;
        allow_write.push(canonical.display().to_string());
        resolved.push(granted(
            job_path(&path.display().to_string(), Access::Write),
            canonical,
        ));
    }
    let writable = job.writable.iter().map(|p| (p.as_path(), Access::Write));
    for (path, access) in job
        .worktree
        .map(|w| (w, Access::Worktree))
        .into_iter()
        .chain(writable)
    {
        let canonical = fs::canonicalize(path).map_err(|e| Error::io("cannot resolve", path, e))?;
        resolved.push(granted(
            job_path(&path.display().to_string(), access),
            canonical,
        ));
    }
    // What the job must read whatever the policy says; a path that does not exist needs no rule.
    let installation = job
        .installation
        .iter()
        .filter(|_| policy.filesystem.installation);
    for path in job.readable.iter().chain(installation) {
        if let Ok(canonical) = fs::canonicalize(path) {
            resolved.push(granted(
                job_path(&path.display().to_string(), Access::Read),
                canonical,
            ));
        }
    }
    // A policy's write rule (a variable in it set by a project's environment, `CODEX_HOME=.git`)
    // never opens the whole home directory or above, nor the project or its git directory.
    let home = std::env::var_os("HOME").map(|h| fs::canonicalize(&h).unwrap_or_else(|_| h.into()));
    for r in resolved
        .iter_mut()
        .filter(|r| matches!(r.access, Access::Write | Access::WriteFile))
    {
        let Some(path) = r.path.clone() else { continue };
        let opens_home = home.as_ref().is_some_and(|h| h.starts_with(&path));
        let opens_project = job.worktree.is_some()
            && job.readable.iter().any(|p| {
                let p = fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                p.starts_with(&path) || (p.ends_with(".git") && path.starts_with(&p))
            });
        if r.written.starts_with('<') || !(opens_home || opens_project) {
            continue;
        }
        r.outcome = Outcome::Failed;
        r.detail = Some(format!(
            "{} is {}; no policy makes that writable",
            path.display(),
            if opens_home {
                "the home directory or a directory above it"
            } else {
                "the project, its git directory or a directory holding them"
            }
        ));
    }
    // Every path is checked before anything is made.
    if let Some(r) = resolved.iter().find(|r| r.outcome == Outcome::Failed) {
        let what = match r.access {
            Access::Read | Access::List => "read path",
            Access::Write | Access::Worktree => "write path",
            Access::WriteFile => "writable file",
            Access::Device => "device",
            Access::Connect => "unix socket",
            Access::Deny => "denied path",
        };
        let detail = r.detail.clone().unwrap_or_default();
        return Err(fail(format!("{what} {}: {detail}", r.written)));
    }
    let mut made = Made::default();
    let mut created = Vec::with_capacity(resolved.len());
    for r in resolved {
        if r.outcome != Outcome::WillCreate {
            created.push(r);
            continue;
        }
        let written = r.written.clone();
        match create(r, &mut made) {
            Ok(r) => created.push(r),
            Err(e) => {
                made.undo();
                return Err(fail(format!("write path {written}: {e}")));
            }
        }
    }
    let resolved = created;
    let mut notes = Vec::new();
    for r in &resolved {
        let detail = r.detail.clone().unwrap_or_default();
        match r.outcome {
            Outcome::Skipped if r.noted => notes.push(format!("{} skipped: {detail}", r.written)),
            Outcome::Created => notes.push(detail),
            _ => {}
        }
    }
    let kernel = Kernel::probe();
    let states = features(policy, kernel);
    let rules = rules(policy, abi, &resolved, &states);
    let report = SandboxReport {
        enforced: true,
        landlock_abi: Some(abi),
        policy: loaded.name.clone(),
        policy_ref: Some(loaded.reference.clone()),
        gaps: gaps(policy, kernel, &states, reads_everything(&resolved)),
        allow_write,
        refused: None,
    };
    Ok(Built {
        rules: Some(rules),
        report,
        notes,
        made,
    })
}

fn job_path(written: &str, access: Access) -> Resolved {
    Resolved {
        written: written.to_string(),
        access,
        path: None,
        outcome: Outcome::Failed,
        detail: None,
        noted: false,
    }
}

/// The rules of resolved paths, with what the kernel can enforce of the rest of the policy.
fn rules(policy: &Policy, abi: u32, resolved: &[Resolved], states: &[FeatureState]) -> Rules {
    let enforced = |f: Feature| states.iter().any(|s| s.feature == f && s.enforced);
    let mut read = Vec::new();
    let mut write = Vec::new();
    let mut write_files = Vec::new();
    let devices: Vec<PathBuf> = DEVICES
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    let mut worktree = Vec::new();
    let mut unix_allowed = Vec::new();
    let mut denied = Vec::new();
    for r in resolved {
        let Some(path) = &r.path else { continue };
        if !matches!(r.outcome, Outcome::Granted | Outcome::Created) {
            continue;
        }
        let list = match r.access {
            Access::Read => &mut read,
            // Only what a read rule over /dev becomes, never written in a policy.
            Access::List => continue,
            Access::Write => &mut write,
            Access::Worktree => &mut worktree,
            Access::WriteFile => &mut write_files,
            Access::Connect => &mut unix_allowed,
            // Policies name no devices: isolate's own list, and the job's terminal.
            Access::Device => continue,
            Access::Deny => &mut denied,
        };
        if !list.contains(path) {
            list.push(path.clone());
        }
    }
    let (read, list) = carve(read, &denied);
    let network = enforced(Feature::Network);
    let scopes = enforced(Feature::Scopes);
    let net = &policy.network;
    // A domain allowlist: TCP to the proxy and the job's own ports only (both known once the
    // supervisor has started the proxy: `Rules::route_through`; until then, nothing), no UDP.
    let proxied = net.proxied();
    let connect = match proxied {
        true => Some(Vec::new()),
        false => net.connect.allowed().map(<[u16]>::to_vec),
    };
    let sockets = enforced(Feature::Seccomp).then(|| Sockets {
        unix_allowed,
        unix_datagram: net.unix_datagram.allowed(),
        abstract_scoped: policy.scopes.abstract_unix_sockets,
        udp: net.udp.allowed() && !proxied,
        tcp_connect: connect.clone(),
        tcp_bind: net.bind.allowed().map(<[u16]>::to_vec),
        route: proxied.then(|| Route {
            proxy: None,
            own: Vec::new(),
        }),
    });
    let limits = &policy.limits;
    let limits = [
        (Resource::OpenFiles, limits.open_files),
        (Resource::Processes, limits.processes),
        (Resource::CoreSize, limits.core_size),
        (Resource::AddressSpace, limits.address_space),
    ]
    .into_iter()
    .filter_map(|(resource, value)| value.map(|value| Limit { resource, value }))
    .collect();
    Rules {
        abi,
        read,
        list,
        write,
        worktree,
        write_files,
        devices,
        connect_tcp: network.then_some(connect).flatten(),
        bind_tcp: network
            .then(|| policy.network.bind.allowed().map(<[u16]>::to_vec))
            .flatten(),
        scope_signals: scopes && policy.scopes.signals,
        scope_abstract_unix: scopes && policy.scopes.abstract_unix_sockets,
        limits,
        sockets,
        narrowed: None,
    }
}

/// The policy reads `/` (all but the devices and denied paths `carve` keeps back).
fn reads_everything(resolved: &[Resolved]) -> bool {
    resolved.iter().any(|r| {
        r.access == Access::Read
            && r.outcome == Outcome::Granted
            && r.path.as_deref() == Some(Path::new("/"))
    })
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The gap of `--no-sandbox`.
pub const NO_SANDBOX: &str =
    "no sandbox (--no-sandbox): nothing is enforced (no Landlock, no capability drop, no resource limits)";

/// Every place the sandbox does not reach (spec/sandbox.md, "Gaps are reported, never hidden").
fn gaps(
    policy: &Policy,
    kernel: Kernel,
    states: &[FeatureState],
    reads_unrestricted: bool,
) -> Vec<String> {
    let Some(abi) = kernel.landlock_abi else {
        return vec!["no Landlock on this kernel: isolate cannot sandbox a job here".to_string()];
    };
    let mut gaps = vec![
        "file metadata changes (chmod, chown, timestamps, xattrs) are not restricted by Landlock"
            .to_string(),
    ];
    let state = |f: Feature| states.iter().find(|s| s.feature == f);
    let missing = |f: Feature| state(f).is_some_and(|s| s.asked && !s.available);
    let seccomp = !missing(Feature::Seccomp);
    let net = &policy.network;
    // A domain allowlist restricts connect to the proxy (and the job's own ports).
    let connect = match net.proxied() {
        true => Some(&[][..]),
        false => net.connect.allowed(),
    };
    if net.proxied() {
        gaps.push(format!(
            "tcp reaches the {} allowed names through isolate's proxy (udp is refused: the proxy resolves names): what the job reads can leave to those hosts",
            net.allow.len()
        ));
        if net.allow_local {
            gaps.push(
                "the proxy may reach loopback, private and link-local addresses the allowed names resolve to (allow_local)"
                    .into(),
            );
        }
    }
    match (connect, net.bind.allowed()) {
        (None, None) => gaps.push("tcp connect and bind are not restricted by this policy".into()),
        (None, Some(_)) => gaps.push("tcp connect is not restricted by this policy".into()),
        (Some(_), None) => gaps.push("tcp bind is not restricted by this policy".into()),
        (Some(_), Some(_)) => {}
    }
    if missing(Feature::Network) {
        gaps.push(format!(
            "tcp connect and bind rules of the policy are not enforced by Landlock (needs Landlock ABI {}, kernel has {abi}){}",
            probe::NETWORK_ABI,
            if seccomp { "; the seccomp layer still checks every connect's port" } else { "" }
        ));
    }
    if !seccomp {
        let why = probe::seccomp().err().unwrap_or("the kernel lacks it");
        gaps.push(format!(
            "no seccomp layer ({why}): path-named unix sockets outside the job, udp, mptcp, tcp fast open, \
             listen() on an unbound socket, raw and packet sockets, io_uring and user namespaces are not restricted"
        ));
    } else {
        if net.udp.allowed() && !net.proxied() {
            gaps.push("udp (dns included) is not restricted by this policy".into());
        }
        if net.unix_datagram.allowed() {
            gaps.push(
                "datagram unix sockets may send to any path-named datagram socket on the machine (unix_datagram = \"all\")"
                    .into(),
            );
        }
    }
    if reads_unrestricted {
        gaps.push(
            "reads are not restricted: the policy may read every file (but the devices in /dev and the credential stores)"
                .to_string(),
        );
    }
    if state(Feature::DeviceIoctls).is_some_and(|s| !s.available) {
        gaps.push(format!(
            "ioctl on device files is not restricted (needs Landlock ABI {}, kernel has {abi})",
            probe::IOCTL_ABI
        ));
    }
    if missing(Feature::Scopes) {
        if policy.scopes.signals {
            gaps.push(format!(
                "signals to processes outside the sandbox are not scoped (needs Landlock ABI {}, kernel has {abi})",
                probe::SCOPES_ABI
            ));
        }
        // The seccomp layer checks every connect itself, abstract ones included.
        if policy.scopes.abstract_unix_sockets && !seccomp {
            gaps.push(format!(
                "abstract unix sockets outside the sandbox are reachable (needs Landlock ABI {}, kernel has {abi})",
                probe::SCOPES_ABI
            ));
        }
    }
    if !policy.scopes.signals {
        gaps.push("signals to processes outside the sandbox are allowed by this policy".into());
    }
    if !policy.scopes.abstract_unix_sockets {
        gaps.push("abstract unix sockets outside the sandbox are reachable by this policy".into());
    }
    gaps
}

/// A policy resolved on this machine without a job: what `policy show` and `doctor` print.
#[derive(Debug, Clone, Serialize)]
pub struct Preview {
    /// The ABI isolate would use (capped by `ISOLATE_LANDLOCK_ABI_MAX`).
    pub landlock_abi: Option<u32>,
    pub paths: Vec<Resolved>,
    pub features: Vec<FeatureState>,
    pub gaps: Vec<String>,
    /// Said in the start line of a run.
    pub notes: Vec<String>,
    /// What would make a run with this policy fail here.
    pub problems: Vec<String>,
}

/// `loaded` resolved as a run would resolve it, creating nothing; the job's own paths are shown as
/// `<worktree>`, `<tmpdir>` and `<project>`.
pub fn preview(loaded: &Loaded) -> Preview {
    let kernel = Kernel::probe();
    let abi = kernel.landlock_abi;
    let policy = &loaded.policy;
    let mut paths = resolve_policy_paths(policy);
    let placeholder = |written: &str, access, detail: &str| Resolved {
        written: written.to_string(),
        access,
        path: None,
        outcome: Outcome::Granted,
        detail: Some(detail.to_string()),
        noted: false,
    };
    paths.extend([
        placeholder(
            "<worktree>",
            Access::Write,
            "the job's worktree (with --worktree)",
        ),
        placeholder("<tmpdir>", Access::Write, "the job's private TMPDIR"),
        placeholder(
            "<project>",
            Access::Read,
            "the project (top level, git directory, objects, hooks); without --worktree the current directory",
        ),
    ]);
    paths.extend(DEVICES.iter().map(|device| Resolved {
        path: Some(PathBuf::from(device)),
        detail: None,
        ..placeholder(device, Access::Device, "")
    }));
    let mut notes = Vec::new();
    let mut problems = Vec::new();
    for r in &paths {
        let detail = r.detail.clone().unwrap_or_default();
        match r.outcome {
            Outcome::Failed => problems.push(format!("{}: {detail}", r.written)),
            Outcome::Skipped if r.noted => notes.push(format!("{} skipped: {detail}", r.written)),
            _ => {}
        }
    }
    if let Err(e) = check(loaded, kernel) {
        problems.push(e.to_string());
    }
    let states = features(policy, kernel);
    let gaps = gaps(policy, kernel, &states, reads_everything(&paths));
    Preview {
        landlock_abi: abi,
        paths,
        features: states,
        gaps,
        notes,
        problems,
    }
}

/// Expands `~` and `$VAR`/`${VAR}`.
pub(crate) fn expand(raw: &str) -> std::result::Result<String, String> {
    let var = |name: &str| match std::env::var(name) {
        // An empty value names nothing: as if unset.
        Ok(value) if value.is_empty() => Err(format!("${name} is empty")),
        Ok(value) => Ok(value),
        // A shell variable, never exported: the user's id.
        Err(_) if name == "UID" => Ok(nix::unistd::getuid().to_string()),
        Err(_) => Err(format!("${name} is not set")),
    };
    let mut out = match raw.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => var("HOME")? + rest,
        _ => raw.to_string(),
    };
    // Expanded values are not expanded again: `from` moves past each substitution.
    let mut from = 0;
    while let Some(start) = out[from..].find('$').map(|i| i + from) {
        let rest = &out[start + 1..];
        let (name, len) = match rest.strip_prefix('{') {
            Some(inner) => {
                let end = inner
                    .find('}')
                    .ok_or_else(|| format!("unclosed ${{ in {raw}"))?;
                (&inner[..end], end + 2)
            }
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], end)
            }
        };
        if name.is_empty() {
            return Err(format!("a lone $ in {raw}"));
        }
        let value = var(name)?;
        out.replace_range(start..start + 1 + len, &value);
        from = start + value.len();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::policy;

    #[test]
    fn expand_home_and_variables() {
        let home = std::env::var("HOME").unwrap();
        assert_eq!(expand("~/.claude").unwrap(), format!("{home}/.claude"));
        assert_eq!(expand("${HOME}/x").unwrap(), format!("{home}/x"));
        assert_eq!(expand("$HOME").unwrap(), home);
        assert!(expand("$ISOLATE_SURELY_UNSET_VAR/x").is_err());
        assert!(expand("/a/${B").is_err());
        assert_eq!(expand("~user/x").unwrap(), "~user/x");
    }

    #[test]
    fn a_required_feature_fails_closed_and_a_best_effort_one_is_a_gap() {
        let kernel = |abi: Option<u32>, seccomp: bool| Kernel {
            landlock_abi: abi,
            seccomp,
        };
        let offline = policy::load("offline").unwrap();
        let err = check(&offline, kernel(Some(3), true))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ABI 4") && err.contains("ABI 3"), "{err}");
        assert_eq!(check(&offline, kernel(Some(4), true)).unwrap(), 4);
        let default = policy::load("default").unwrap();
        assert_eq!(check(&default, kernel(Some(3), true)).unwrap(), 3);
        let states = features(&default.policy, kernel(Some(3), true));
        let gaps = gaps(&default.policy, kernel(Some(3), true), &states, true);
        assert!(gaps.iter().any(|g| g.contains("signals")), "{gaps:?}");
        // The broker scopes abstract sockets itself where Landlock cannot.
        assert!(!gaps.iter().any(|g| g.contains("abstract")), "{gaps:?}");
        assert!(check(&default, kernel(Some(2), true)).is_err());
        assert!(check(&default, kernel(None, true)).is_err());
        // The seccomp layer is required unless the policy says otherwise.
        let err = check(&default, kernel(Some(7), false)).unwrap_err();
        assert!(matches!(err, Error::SeccompUnavailable { .. }), "{err}");
    }

    #[test]
    fn every_builtin_profile_resolves() {
        for (name, _) in policy::BUILTIN {
            let loaded = policy::load(name).unwrap();
            let preview = preview(&loaded);
            assert!(
                preview.paths.iter().all(|p| p.outcome != Outcome::Failed),
                "{name}: {:?}",
                preview.paths
            );
            assert!(!preview.gaps.is_empty(), "{name}");
        }
    }
}
