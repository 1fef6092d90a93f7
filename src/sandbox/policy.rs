//! The policy as the user wrote it: TOML, every key known (a typo in a security policy must not
//! silently widen or narrow it), then merged along its `extends` chain into one `Policy` with every
//! default filled in. Paths stay as written here (`~`, `$VAR`); plan.rs resolves them for a job.
//! Built-in profiles are the files of `policy/`, compiled in; a user's own live in
//! `$XDG_CONFIG_HOME/isolate/policy/NAME.toml`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::sandbox::credentials;

/// The built-in profiles, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../policy/default.toml")),
    ("offline", include_str!("../../policy/offline.toml")),
    ("strict", include_str!("../../policy/strict.toml")),
    ("claude-code", include_str!("../../policy/claude-code.toml")),
    ("codex", include_str!("../../policy/codex.toml")),
    ("aider", include_str!("../../policy/aider.toml")),
    ("opencode", include_str!("../../policy/opencode.toml")),
    ("gemini", include_str!("../../policy/gemini.toml")),
];

/// A policy resolved along its `extends` chain, every default filled in.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub filesystem: Filesystem,
    pub network: Network,
    pub scopes: Scopes,
    pub environment: Environment,
    pub limits: Limits,
    pub compatibility: Compatibility,
    /// `[command]`: arguments put after CMD's first word when CMD is the known agent whose
    /// profile is the key (`codex = ["-c", "daemon_auto_start=false"]`), said in the start line.
    pub command: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Default)]
pub struct Filesystem {
    /// Readable and executable, with everything beneath (default `missing`: note).
    pub read: Vec<PathRule>,
    /// Writable, with everything beneath (default `missing`: error).
    pub write: Vec<PathRule>,
    /// Single writable files (default `missing`: error).
    pub write_files: Vec<PathRule>,
    /// The tree the command's own installation occupies is readable and executable
    /// (sandbox/agent.rs `installation`): an agent installed per user runs under a policy that
    /// does not read the home directory.
    pub installation: bool,
    /// Files copied before the job starts, when `to` does not exist and `from` does.
    pub seed: Vec<Seed>,
    /// Never readable, whatever the read rules above them grant (credential stores): a read rule
    /// covering one is carved around it. A read rule naming a path inside one re-allows exactly
    /// that path (an agent's own auth file). Default `missing`: ignore.
    pub deny_read: Vec<PathRule>,
}

/// State an agent profile carries over before the job starts: `from` (the agent's file where it
/// keeps it outside isolate) copied to `to` (where the profile makes it keep it), once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    pub from: String,
    pub to: String,
}

/// One path of a policy, as written, and what to do when it does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRule {
    pub path: String,
    pub missing: Missing,
}

/// What a path that does not exist (or names an unset variable) does to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missing {
    /// The run fails (status 125).
    Error,
    /// Skipped, and said in the start line.
    Note,
    /// Skipped silently (shown by `isolate policy show`).
    Ignore,
    /// isolate creates it (a directory, or an empty file in `write_files`), mode 0700/0600.
    Create,
}

/// What the job's sockets may reach. TCP ports are Landlock rules (ABI 4) and checked again by the
/// seccomp layer on every connect it makes for the job; UDP, unix sockets and the protocols that
/// slip past Landlock's TCP hooks are the seccomp layer's (sandbox/seccomp.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    pub connect: Ports,
    pub bind: Ports,
    /// UDP (DNS included): `all` or `none`.
    pub udp: Reach,
    /// Path-named unix sockets served from outside the job that it may connect to: a socket file,
    /// or a directory (every socket beneath it). The job's own sockets need no rule.
    pub unix_sockets: Vec<PathRule>,
    /// Datagram unix sockets. A datagram socket names its destination on every send, which the
    /// kernel (before Landlock ABI 9) lets no filter check, so `all` opens every datagram listener
    /// on the machine (a gap); `none` refuses creating them.
    pub unix_datagram: Reach,
    /// The domain allowlist. Not empty: the job's TCP goes through isolate's proxy (its only TCP
    /// destination besides the job's own ports), which reaches these names only; `connect` is then
    /// replaced by the proxy's port and UDP is refused (the proxy resolves names).
    pub allow: Vec<Destination>,
    /// The proxy may reach loopback, private and link-local addresses a name resolves to (a local
    /// registry mirror, tests); off by default, so that an allowed name cannot lead to the cloud's
    /// metadata service or a service on the machine.
    pub allow_local: bool,
}

impl Network {
    /// The job's TCP goes through isolate's proxy.
    pub fn proxied(&self) -> bool {
        !self.allow.is_empty()
    }
}

impl Default for Network {
    fn default() -> Self {
        Network {
            connect: Ports::All,
            bind: Ports::All,
            udp: Reach::All,
            unix_sockets: Vec::new(),
            unix_datagram: Reach::None,
            allow: Vec::new(),
            allow_local: false,
        }
    }
}

/// A host name the proxy may reach: exactly, or every name beneath a domain (`*.github.com`,
/// which is not `github.com` itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Exact(String),
    /// The suffix, with its leading dot (`.github.com`).
    Beneath(String),
}

/// One entry of `[network] allow`: `name`, `*.domain`, either with `:port` (without one: 443 and
/// 80). Names are kept in lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub host: Host,
    pub port: Option<u16>,
}

impl Destination {
    /// The ports an entry without one allows.
    pub const DEFAULT_PORTS: [u16; 2] = [443, 80];

    /// `host` (lowercase, without a trailing dot) on `port` is this entry's.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(p) => p == port,
            None => Self::DEFAULT_PORTS.contains(&port),
        };
        port_ok
            && match &self.host {
                Host::Exact(name) => name == host,
                Host::Beneath(suffix) => {
                    host.len() > suffix.len() && host.ends_with(suffix.as_str())
                }
            }
    }
}

impl std::str::FromStr for Destination {
    type Err = String;

    /// A host name (letters, digits, `-` in dot-separated labels of at most 63), optionally `*.`
    /// before it and `:port` after it; anything else (a URL, a path, `*`, an address with `/`) is
    /// refused, saying what it is.
    fn from_str(entry: &str) -> std::result::Result<Destination, String> {
        let bad = |why: &str| format!("allow entry {entry:?} is not a host name: {why}");
        let (name, port) = match entry.rsplit_once(':') {
            Some((name, port)) => {
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| {
                        bad("expected NAME or NAME:PORT (a URL? write only its host)")
                    })?;
                (name, Some(port))
            }
            None => (entry, None),
        };
        let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
        let (wildcard, rest) = match name.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, name.as_str()),
        };
        if rest.is_empty() || rest == "*" {
            return Err(bad("a name is needed (`*` alone would allow every host)"));
        }
        if rest.len() > 253 {
            return Err(bad("longer than 253 characters"));
        }
        for label in rest.split('.') {
            let fine = !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if !fine {
                return Err(bad(
                    "expected letters, digits and - in dot-separated labels, optionally *. before and :PORT after",
                ));
            }
        }
        if wildcard && !rest.contains('.') {
            return Err(bad(
                "a wildcard needs a domain of two labels at least (*.example.com)",
            ));
        }
        let host = match wildcard {
            true => Host::Beneath(format!(".{rest}")),
            false => Host::Exact(rest.to_string()),
        };
        Ok(Destination { host, port })
    }
}

impl fmt::Display for Destination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            Host::Exact(name) => f.write_str(name)?,
            Host::Beneath(suffix) => write!(f, "*{suffix}")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

impl Serialize for Destination {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Destination {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(de::Error::custom)
    }
}

/// `"all"` or `"none"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    #[default]
    All,
    None,
}

impl Reach {
    pub fn allowed(self) -> bool {
        self == Reach::All
    }
}

impl fmt::Display for Reach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reach::All => "all",
            Reach::None => "none",
        })
    }
}

/// `"all"`, `"none"`, or a list of ports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Ports {
    #[default]
    All,
    Only(Vec<u16>),
}

impl Ports {
    /// The ports allowed, `None` when the policy does not restrict them.
    pub fn allowed(&self) -> Option<&[u16]> {
        match self {
            Ports::All => None,
            Ports::Only(ports) => Some(ports),
        }
    }
}

impl fmt::Display for Ports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ports::All => f.write_str("all"),
            Ports::Only(ports) if ports.is_empty() => f.write_str("none"),
            Ports::Only(ports) => {
                let shown: Vec<String> = ports.iter().map(u16::to_string).collect();
                f.write_str(&shown.join(", "))
            }
        }
    }
}

impl Serialize for Ports {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Ports::All => s.serialize_str("all"),
            Ports::Only(ports) if ports.is_empty() => s.serialize_str("none"),
            Ports::Only(ports) => ports.serialize(s),
        }
    }
}

/// Landlock scopes (ABI 6); both on unless the policy says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Scopes {
    /// The job may not signal processes outside its sandbox.
    pub signals: bool,
    /// The job may not connect to abstract unix sockets created outside it.
    pub abstract_unix_sockets: bool,
}

impl Default for Scopes {
    fn default() -> Self {
        Scopes {
            signals: true,
            abstract_unix_sockets: true,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Variables removed before exec.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Variables set before exec (a leading `~/` is the home directory).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Variables set before exec unless the caller has them (a leading `~/` is the home directory).
    #[serde(default)]
    pub default: BTreeMap<String, String>,
    /// Variables removed by name pattern (`*` any run of characters): names that mark
    /// credentials, `*_TOKEN`, `*_PASSWORD`, `AWS_*`.
    #[serde(default)]
    pub remove_matching: Vec<String>,
    /// Exempt from `remove_matching`: what an agent's profile keeps for its own agent.
    #[serde(default)]
    pub keep: Vec<String>,
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters (none included),
/// in any case (`github_token` is a `*_TOKEN`).
pub fn matches(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.to_ascii_uppercase(), name.to_ascii_uppercase());
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

impl Environment {
    /// Whether this section removes `name`.
    pub fn removes(&self, name: &str) -> bool {
        self.remove.iter().any(|r| r == name)
            || (self.remove_matching.iter().any(|p| matches(p, name))
                && !self.keep.iter().any(|k| k == name))
    }

    /// `env` as this section makes it: its variables removed, then its values set, then its
    /// defaults where `env` has none.
    pub fn apply(&self, env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>) {
        env.retain(|(k, _)| !k.to_str().is_some_and(|k| self.removes(k)));
        let home = env
            .iter()
            .find(|(k, _)| k == "HOME")
            .map(|(_, v)| v.clone());
        let value = |v: &str| -> std::ffi::OsString {
            match (v.strip_prefix("~/"), &home) {
                (Some(rest), Some(home)) => Path::new(home).join(rest).into(),
                _ => v.into(),
            }
        };
        for (key, v) in &self.set {
            env.retain(|(k, _)| k != key.as_str());
            env.push((key.into(), value(v)));
        }
        for (key, v) in &self.default {
            if !env.iter().any(|(k, _)| k == key.as_str()) {
                env.push((key.into(), value(v)));
            }
        }
    }
}

/// Resource limits set in the pre-exec helper (`None`: left as inherited), and the default timeout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// RLIMIT_NOFILE.
    pub open_files: Option<u64>,
    /// RLIMIT_NPROC: note that the kernel counts every process of the user, not only the job's.
    pub processes: Option<u64>,
    /// RLIMIT_CORE, in bytes.
    pub core_size: Option<u64>,
    /// RLIMIT_AS, in bytes.
    pub address_space: Option<u64>,
    /// Wall-clock timeout when `--timeout` is not given.
    #[serde(serialize_with = "serialize_duration")]
    pub timeout: Option<Duration>,
}

/// Whether a Landlock feature the policy asks for must be enforced (else the run fails) or is best
/// effort (else it is listed as a gap). Write containment is always required.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    #[default]
    Required,
    BestEffort,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Compatibility {
    /// TCP rules (Landlock ABI 4).
    pub network: Level,
    /// Signal and abstract unix socket scopes (Landlock ABI 6).
    pub scopes: Level,
    /// The seccomp layer (unix sockets, UDP, the TCP bypasses; seccomp user notification).
    pub seccomp: Level,
}

/// A loaded policy and the name it is reported under.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// A profile's name, or the file's path as given.
    pub name: String,
    /// What `load` takes to load it again from anywhere: the profile's name, or the file's
    /// canonical path. Recorded with a job, so that what runs in its worktree later (`merge`,
    /// `sync`, `--resume`) runs under the same policy.
    pub reference: String,
    /// Where it came from, then what it extends, in order (`claude-code`, `default`).
    pub sources: Vec<String>,
    pub policy: Policy,
}

// ---- The file as written: every field optional, so that `extends` can tell what a file sets. ----

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// Another profile (by name) or file (relative to this one) that this one adds to; or a list:
    /// the first with everything it extends, then what each of the others says itself (not what
    /// they extend), so that `["strict", "claude-code"]` is strict with Claude Code's state.
    extends: Option<Extends>,
    #[serde(default)]
    filesystem: FilesystemFile,
    #[serde(default)]
    network: NetworkFile,
    #[serde(default)]
    scopes: ScopesFile,
    #[serde(default)]
    environment: Environment,
    #[serde(default)]
    limits: LimitsFile,
    #[serde(default)]
    compatibility: CompatibilityFile,
    #[serde(default)]
    command: BTreeMap<String, Vec<String>>,
}

/// `extends = "name"` or `extends = ["first", "second", ...]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Extends {
    One(String),
    Many(Vec<String>),
}

impl Extends {
    fn names(&self) -> Vec<&str> {
        match self {
            Extends::One(name) => vec![name.as_str()],
            Extends::Many(names) => names.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilesystemFile {
    #[serde(default)]
    read: Vec<PathEntry>,
    #[serde(default)]
    write: Vec<PathEntry>,
    #[serde(default)]
    write_files: Vec<PathEntry>,
    installation: Option<bool>,
    #[serde(default)]
    seed: Vec<Seed>,
    #[serde(default)]
    deny_read: Vec<PathEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkFile {
    connect: Option<Ports>,
    bind: Option<Ports>,
    udp: Option<Reach>,
    #[serde(default)]
    unix_sockets: Vec<PathEntry>,
    unix_datagram: Option<Reach>,
    #[serde(default)]
    allow: Vec<Destination>,
    allow_local: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScopesFile {
    signals: Option<bool>,
    abstract_unix_sockets: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsFile {
    open_files: Option<u64>,
    processes: Option<u64>,
    core_size: Option<Size>,
    address_space: Option<Size>,
    #[serde(default, deserialize_with = "deserialize_duration")]
    timeout: Option<Duration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompatibilityFile {
    network: Option<Level>,
    scopes: Option<Level>,
    seccomp: Option<Level>,
}

/// A path: a string, or a table `{ path = "...", missing = "..." }`.
#[derive(Debug)]
struct PathEntry {
    path: String,
    missing: Option<Missing>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathTable {
    path: String,
    missing: Option<Missing>,
}

impl<'de> Deserialize<'de> for PathEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PathEntry;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a path, or a table { path = \"...\", missing = \"error\" | \"note\" | \"ignore\" | \"create\" }")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<PathEntry, E> {
                Ok(PathEntry {
                    path: s.to_string(),
                    missing: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<PathEntry, A::Error> {
                let table = PathTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(PathEntry {
                    path: table.path,
                    missing: table.missing,
                })
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Ports {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ports;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"all\", \"none\" or a list of TCP ports")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Ports, E> {
                match s {
                    "all" => Ok(Ports::All),
                    "none" => Ok(Ports::Only(Vec::new())),
                    _ => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Ports, A::Error> {
                let mut ports = Vec::new();
                while let Some(port) = seq.next_element::<u16>()? {
                    if !ports.contains(&port) {
                        ports.push(port);
                    }
                }
                Ok(Ports::Only(ports))
            }
        }
        d.deserialize_any(V)
    }
}

/// A size in bytes: an integer, or a string with a binary suffix (`"512M"`, `"8GiB"`).
#[derive(Debug, Clone, Copy)]
struct Size(u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size in bytes: an integer, or a string such as \"512M\" or \"8GiB\"")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> std::result::Result<Size, E> {
                u64::try_from(n)
                    .map(Size)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(n), &self))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> std::result::Result<Size, E> {
                Ok(Size(n))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Size, E> {
                parse_size(s).ok_or_else(|| E::invalid_value(de::Unexpected::Str(s), &self))
            }
        }
        d.deserialize_any(V)
    }
}

fn parse_size(s: &str) -> Option<Size> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let number: u64 = s[..digits].parse().ok()?;
    let shift = match s[digits..].trim() {
        "" | "B" => 0,
        "K" | "KiB" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        "T" | "TiB" => 40,
        _ => return None,
    };
    number.checked_mul(1 << shift).map(Size)
}

fn deserialize_duration<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Duration>, D::Error> {
    let text = String::deserialize(d)?;
    humantime::parse_duration(&text)
        .map(Some)
        .map_err(|e| de::Error::custom(format!("{e} (examples: \"90s\", \"15m\", \"2h\")")))
}

fn serialize_duration<S: serde::Serializer>(
    d: &Option<Duration>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_str(&humantime::format_duration(*d).to_string()),
        None => s.serialize_none(),
    }
}

// ---- Loading ----

/// Where a profile came from: the identity that detects an `extends` cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    Builtin(&'static str),
    File(PathBuf),
}

/// `NAME` of a built-in or user profile, or a path to a TOML file (it contains `/` or ends in
/// `.toml`), with its `extends` chain merged in.
pub fn load(name_or_file: &str) -> Result<Loaded> {
    let mut stack = Vec::new();
    let (name, mut policy) = load_chain(name_or_file, Path::new("."), &mut stack)?;
    // What every profile refuses, first (sandbox/credentials.rs).
    let own = std::mem::take(&mut policy.filesystem.deny_read);
    policy.filesystem.deny_read = credentials::stores()
        .into_iter()
        .map(|path| PathRule {
            path,
            missing: Missing::Ignore,
        })
        .chain(own)
        .collect();
    let environment = &mut policy.environment;
    let own = std::mem::take(&mut environment.remove_matching);
    environment.remove_matching = credentials::SECRET_VARIABLES
        .iter()
        .map(|p| p.to_string())
        .chain(
            own.into_iter()
                .filter(|p| !credentials::SECRET_VARIABLES.contains(&p.as_str())),
        )
        .collect();
    let reference = match stack.first() {
        Some((Origin::File(path), _)) if is_file_reference(name_or_file) => {
            path.display().to_string()
        }
        _ => name_or_file.to_string(),
    };
    Ok(Loaded {
        name,
        reference,
        sources: stack.iter().map(|(_, shown)| shown.clone()).collect(),
        policy,
    })
}

/// The directory of the user's profiles: `$XDG_CONFIG_HOME/isolate/policy`, else
/// `~/.config/isolate/policy`.
pub fn user_dir() -> Option<PathBuf> {
    Some(
        crate::sys::dirs::config_home()?
            .join("isolate")
            .join("policy"),
    )
}

fn is_file_reference(reference: &str) -> bool {
    reference.contains('/') || reference.ends_with(".toml")
}

/// Finds `reference` (relative files from `from_dir`), reads it, then what it extends.
/// `stack` holds the chain so far, to refuse a cycle.
fn load_chain(
    reference: &str,
    from_dir: &Path,
    stack: &mut Vec<(Origin, String)>,
) -> Result<(String, Policy)> {
    let found = find(reference, from_dir)?;
    if stack.iter().any(|(o, _)| *o == found.origin) {
        let chain: Vec<&str> = stack
            .iter()
            .map(|(_, s)| s.as_str())
            .chain([found.name.as_str()])
            .collect();
        return Err(Error::Policy {
            source_name: stack.last().map_or(found.label.clone(), |(_, s)| s.clone()),
            message: format!("extends makes a cycle: {}", chain.join(" -> ")),
        });
    }
    stack.push((found.origin.clone(), found.name.clone()));
    let file: File = toml::from_str(&found.text).map_err(|e| Error::Policy {
        source_name: found.label.clone(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let names = file
        .extends
        .as_ref()
        .map(Extends::names)
        .unwrap_or_default();
    if file.extends.is_some() && names.is_empty() {
        return Err(Error::Policy {
            source_name: found.label,
            message: "extends names no profile".into(),
        });
    }
    let dir = match &found.origin {
        Origin::File(path) => path.parent().unwrap_or(Path::new("/")).to_path_buf(),
        Origin::Builtin(_) => PathBuf::from("."),
    };
    if let (Origin::Builtin(_), Some(parent)) =
        (&found.origin, names.iter().find(|n| is_file_reference(n)))
    {
        return Err(Error::Policy {
            source_name: found.label,
            message: format!("a built-in profile extends only profiles by name, not {parent}"),
        });
    }
    let mut base = Policy::default();
    for (i, parent) in names.iter().enumerate() {
        base = if i == 0 {
            load_chain(parent, &dir, stack)?.1
        } else {
            // What the profile itself says, on top of what came before.
            let (own, depth) = (own_file(parent, &dir, stack)?, stack.len());
            stack.truncate(depth);
            merge(base, own)
        };
    }
    Ok((found.name, merge(base, file)))
}

/// The file of profile `reference` as written, without what it extends (a later entry of an
/// `extends` list). It is on the chain while it is read, so a cycle through it is still refused.
fn own_file(reference: &str, from_dir: &Path, stack: &mut Vec<(Origin, String)>) -> Result<File> {
    let found = find(reference, from_dir)?;
    if stack.iter().any(|(o, _)| *o == found.origin) {
        return Err(Error::Policy {
            source_name: found.label,
            message: format!("extends makes a cycle through {}", found.name),
        });
    }
    stack.push((found.origin.clone(), found.name.clone()));
    toml::from_str(&found.text).map_err(|e| Error::Policy {
        source_name: found.label.clone(),
        message: e.to_string().trim_end().to_string(),
    })
}

/// A profile's text, where it came from, the name it is reported under and the label its errors
/// carry (the file's path for files, so that an error names the file).
struct Found {
    origin: Origin,
    name: String,
    label: String,
    text: String,
}

fn find(reference: &str, from_dir: &Path) -> Result<Found> {
    let read = |path: &Path| {
        crate::textfile::read(path).map_err(|e| Error::Policy {
            source_name: path.display().to_string(),
            message: format!("cannot read: {e}"),
        })
    };
    if is_file_reference(reference) {
        let path = if Path::new(reference).is_absolute() {
            PathBuf::from(reference)
        } else {
            from_dir.join(reference)
        };
        let text = read(&path)?;
        let origin = Origin::File(std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone()));
        let shown = path.display().to_string();
        let shown = shown.strip_prefix("./").unwrap_or(&shown).to_string();
        return Ok(Found {
            origin,
            name: shown.clone(),
            label: shown,
            text,
        });
    }
    let user = user_dir()
        .map(|dir| dir.join(format!("{reference}.toml")))
        .filter(|p| p.is_file());
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == reference) {
        if let Some(path) = user {
            return Err(Error::Policy {
                source_name: path.display().to_string(),
                message: format!(
                    "has the name of the built-in profile {name}; rename it (it may say `extends = \"{name}\"`)"
                ),
            });
        }
        return Ok(Found {
            origin: Origin::Builtin(name),
            name: name.to_string(),
            label: name.to_string(),
            text: text.to_string(),
        });
    }
    let Some(path) = user else {
        let known: Vec<_> = BUILTIN.iter().map(|(n, _)| *n).collect();
        let place = user_dir()
            .map(|d| format!("; no {}", d.join(format!("{reference}.toml")).display()))
            .unwrap_or_default();
        return Err(Error::Policy {
            source_name: reference.to_string(),
            message: format!("no such profile (built-in: {}{place})", known.join(", ")),
        });
    };
    let text = read(&path)?;
    Ok(Found {
        origin: Origin::File(std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone())),
        name: reference.to_string(),
        label: path.display().to_string(),
        text,
    })
}

/// `file` on top of `base`: lists add (paths, removed variables), single values override.
fn merge(base: Policy, file: File) -> Policy {
    let paths = |mut base: Vec<PathRule>, added: Vec<PathEntry>, default: Missing| {
        for entry in added {
            base.retain(|r| r.path != entry.path);
            base.push(PathRule {
                path: entry.path,
                missing: entry.missing.unwrap_or(default),
            });
        }
        base
    };
    let fs = file.filesystem;
    let net = file.network;
    let mut environment = base.environment;
    for var in file.environment.remove {
        if !environment.remove.contains(&var) {
            environment.remove.push(var);
        }
    }
    for (k, v) in file.environment.set {
        environment.remove.retain(|r| *r != k);
        environment.set.insert(k, v);
    }
    for (k, v) in file.environment.default {
        environment.remove.retain(|r| *r != k);
        environment.default.insert(k, v);
    }
    for pattern in file.environment.remove_matching {
        if !environment.remove_matching.contains(&pattern) {
            environment.remove_matching.push(pattern);
        }
    }
    for name in file.environment.keep {
        environment.remove.retain(|r| *r != name);
        if !environment.keep.contains(&name) {
            environment.keep.push(name);
        }
    }
    let limits = file.limits;
    Policy {
        filesystem: Filesystem {
            read: paths(base.filesystem.read, fs.read, Missing::Note),
            write: paths(base.filesystem.write, fs.write, Missing::Error),
            write_files: paths(base.filesystem.write_files, fs.write_files, Missing::Error),
            installation: fs.installation.unwrap_or(base.filesystem.installation),
            seed: {
                let mut seed = base.filesystem.seed;
                for added in fs.seed {
                    if !seed.contains(&added) {
                        seed.push(added);
                    }
                }
                seed
            },
            deny_read: paths(base.filesystem.deny_read, fs.deny_read, Missing::Ignore),
        },
        network: Network {
            connect: net.connect.unwrap_or(base.network.connect),
            bind: net.bind.unwrap_or(base.network.bind),
            udp: net.udp.unwrap_or(base.network.udp),
            // A socket rule is a read-like grant: a socket that is not there is noted.
            unix_sockets: paths(base.network.unix_sockets, net.unix_sockets, Missing::Note),
            unix_datagram: net.unix_datagram.unwrap_or(base.network.unix_datagram),
            // A list adds to what the base allows.
            allow: {
                let mut allow = base.network.allow;
                for added in net.allow {
                    if !allow.contains(&added) {
                        allow.push(added);
                    }
                }
                allow
            },
            allow_local: net.allow_local.unwrap_or(base.network.allow_local),
        },
        scopes: Scopes {
            signals: file.scopes.signals.unwrap_or(base.scopes.signals),
            abstract_unix_sockets: file
                .scopes
                .abstract_unix_sockets
                .unwrap_or(base.scopes.abstract_unix_sockets),
        },
        environment,
        limits: Limits {
            open_files: limits.open_files.or(base.limits.open_files),
            processes: limits.processes.or(base.limits.processes),
            core_size: limits.core_size.map(|s| s.0).or(base.limits.core_size),
            address_space: limits
                .address_space
                .map(|s| s.0)
                .or(base.limits.address_space),
            timeout: limits.timeout.or(base.limits.timeout),
        },
        compatibility: Compatibility {
            network: file
                .compatibility
                .network
                .unwrap_or(base.compatibility.network),
            scopes: file
                .compatibility
                .scopes
                .unwrap_or(base.compatibility.scopes),
            seccomp: file
                .compatibility
                .seccomp
                .unwrap_or(base.compatibility.seccomp),
        },
        command: {
            let mut command = base.command;
            command.extend(file.command);
            command
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<Policy, String> {
        toml::from_str::<File>(text)
            .map(|f| merge(Policy::default(), f))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn patterns_match_names_as_globs() {
        for (pattern, name, hit) in [
            ("*_TOKEN", "GITHUB_TOKEN", true),
            ("*_TOKEN", "TOKEN", false),
            ("*_TOKEN", "GITHUB_TOKENS", false),
            ("AWS_*", "AWS_SECRET_ACCESS_KEY", true),
            ("AWS_*", "XAWS_A", false),
            ("*_SECRET*", "MY_SECRET_KEY", true),
            ("*_SECRET*", "MY_SECRET", true),
            ("*SECRET*", "SECRET", true),
            ("PATH", "PATH", true),
            ("PATH", "PATHS", false),
            ("A*B*C", "AxxBxxC", true),
            ("A*B*C", "AxxC", false),
            ("*_KEY", "_KEY", true),
            ("*_TOKEN", "github_token", true),
            ("npm_config_//*", "NPM_CONFIG_//registry/:_authToken", true),
        ] {
            assert_eq!(matches(pattern, name), hit, "{pattern} {name}");
        }
    }

    #[test]
    fn kept_variables_survive_patterns_and_lists_add_along_extends() {
        let base = parse("[environment]\nremove_matching = [\"*_API_KEY\"]\n").unwrap();
        let file: File = toml::from_str("[environment]\nkeep = [\"ANTHROPIC_API_KEY\"]\n").unwrap();
        let policy = merge(base, file);
        let env = &policy.environment;
        assert!(env.removes("OPENAI_API_KEY"));
        assert!(!env.removes("ANTHROPIC_API_KEY"));
        assert!(!env.removes("HOME"));
    }

    #[test]
    fn every_builtin_profile_parses() {
        for (name, text) in BUILTIN {
            let loaded = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                !loaded.policy.filesystem.read.is_empty(),
                "{name} reads nothing"
            );
            assert!(
                text.starts_with(&format!("# {name}: ")),
                "{name} has no comment block"
            );
        }
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_it_and_its_line() {
        let msg = parse("[filesystem]\nwrtie = [\"/tmp\"]\n").unwrap_err();
        assert!(msg.contains("wrtie") && msg.contains("line 2"), "{msg}");
        let msg =
            parse("[filesystem]\nread = [{ path = \"/x\", mising = \"ignore\" }]\n").unwrap_err();
        assert!(msg.contains("mising") && msg.contains("line 2"), "{msg}");
        let msg = parse("[network]\nconnect = \"some\"\n").unwrap_err();
        assert!(msg.contains("some") && msg.contains("line 2"), "{msg}");
        let msg = parse("[limits]\ntimeout = \"soon\"\n").unwrap_err();
        assert!(msg.contains("line 2"), "{msg}");
    }

    #[test]
    fn values_of_every_kind() {
        let policy = parse(
            "[filesystem]\nread = [\"/usr\", { path = \"~/.x\", missing = \"ignore\" }]\n\
             [network]\nconnect = [443, 80, 443]\nbind = \"none\"\n\
             [limits]\nopen_files = 64\naddress_space = \"8GiB\"\ncore_size = 0\ntimeout = \"15m\"\n\
             [compatibility]\nnetwork = \"best_effort\"\n",
        )
        .unwrap();
        assert_eq!(policy.filesystem.read[0].missing, Missing::Note);
        assert_eq!(policy.filesystem.read[1].missing, Missing::Ignore);
        assert_eq!(policy.network.connect, Ports::Only(vec![443, 80]));
        assert_eq!(policy.network.bind, Ports::Only(vec![]));
        assert_eq!(policy.limits.address_space, Some(8 << 30));
        assert_eq!(policy.limits.core_size, Some(0));
        assert_eq!(policy.limits.timeout, Some(Duration::from_secs(900)));
        assert_eq!(policy.compatibility.network, Level::BestEffort);
        assert_eq!(policy.compatibility.scopes, Level::Required);
        assert!(parse("[network]\nconnect = [70000]\n").is_err());
    }

    #[test]
    fn extends_adds_lists_and_overrides_values() {
        let loaded = load("claude-code").unwrap();
        assert_eq!(loaded.sources, ["claude-code", "default"]);
        let default = load("default").unwrap().policy;
        let policy = loaded.policy;
        assert_eq!(policy.filesystem.read, default.filesystem.read);
        assert_eq!(policy.environment.remove, default.environment.remove);
        assert_eq!(
            policy
                .environment
                .default
                .get("CLAUDE_CONFIG_DIR")
                .map(String::as_str),
            Some("~/.claude")
        );
        assert!(policy
            .filesystem
            .write
            .iter()
            .any(|r| r.path == "~/.claude"));
        let offline = load("offline").unwrap().policy;
        assert_eq!(offline.network.connect, Ports::Only(vec![]));
        assert_eq!(offline.environment, default.environment);
    }

    #[test]
    fn a_list_extends_the_first_whole_and_adds_what_the_others_say_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("strict-claude.toml");
        std::fs::write(&file, "extends = [\"strict\", \"claude-code\"]\n").unwrap();
        let policy = load(file.to_str().unwrap()).unwrap().policy;
        let strict = load("strict").unwrap().policy;
        // strict's reads, not default's "/" (which claude-code extends).
        assert_eq!(policy.filesystem.read, strict.filesystem.read);
        assert!(policy
            .filesystem
            .write
            .iter()
            .any(|r| r.path == "~/.claude"));
        assert_eq!(policy.network.udp, Reach::None);
        assert!(policy.environment.default.contains_key("CLAUDE_CONFIG_DIR"));
        assert!(policy.filesystem.installation);
        // A cycle through a later entry is refused; so is an empty list.
        let a = dir.path().join("a.toml");
        std::fs::write(&a, "extends = [\"default\", \"./a.toml\"]\n").unwrap();
        assert!(load(a.to_str().unwrap()).is_err());
        let empty = dir.path().join("empty.toml");
        std::fs::write(&empty, "extends = []\n").unwrap();
        assert!(load(empty.to_str().unwrap()).is_err());
    }

    #[test]
    fn defaults_apply_only_where_the_caller_has_none_and_a_tilde_is_home() {
        let env = Environment {
            remove: vec!["GONE".into()],
            set: BTreeMap::from([("SET".to_string(), "~/set".to_string())]),
            default: BTreeMap::from([
                ("KEPT".to_string(), "~/ignored".to_string()),
                ("ADDED".to_string(), "~/.claude".to_string()),
            ]),
            ..Environment::default()
        };
        let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
            ("HOME".into(), "/home/u".into()),
            ("GONE".into(), "x".into()),
            ("KEPT".into(), "mine".into()),
        ];
        env.apply(&mut vars);
        let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("GONE"), None);
        assert_eq!(get("KEPT"), Some("mine".into()));
        assert_eq!(get("ADDED"), Some("/home/u/.claude".into()));
        assert_eq!(get("SET"), Some("/home/u/set".into()));
    }
}
