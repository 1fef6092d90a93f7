//! A policy file as written: every field optional, so that `extends` can tell what a file sets, and
//! every key known (`deny_unknown_fields`). Parsing only: merge.rs fills in what a file leaves out.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::{Destination, Environment, Level, Missing, Ports, Reach, Seed, Worktree};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct File {
    /// Another profile (by name) or file (relative to this one) that this one adds to; or a list:
    /// the first with everything it extends, then what each of the others says itself (not what
    /// they extend), so that `["strict", "claude-code"]` is strict with Claude Code's state.
    pub(super) extends: Option<Extends>,
    #[serde(default)]
    pub(super) filesystem: FilesystemFile,
    #[serde(default)]
    pub(super) network: NetworkFile,
    #[serde(default)]
    pub(super) scopes: ScopesFile,
    #[serde(default)]
    pub(super) environment: Environment,
    #[serde(default)]
    pub(super) limits: LimitsFile,
    #[serde(default)]
    pub(super) compatibility: CompatibilityFile,
    #[serde(default)]
    pub(super) command: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(super) worktree: Worktree,
}

/// `extends = "name"` or `extends = ["first", "second", ...]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Extends {
    One(String),
    Many(Vec<String>),
}

impl Extends {
    pub(super) fn names(&self) -> Vec<&str> {
        match self {
            Extends::One(name) => vec![name.as_str()],
            Extends::Many(names) => names.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FilesystemFile {
    #[serde(default)]
    pub(super) read: Vec<PathEntry>,
    #[serde(default)]
    pub(super) write: Vec<PathEntry>,
    #[serde(default)]
    pub(super) write_files: Vec<PathEntry>,
    pub(super) installation: Option<bool>,
    #[serde(default)]
    pub(super) seed: Vec<Seed>,
    #[serde(default)]
    pub(super) deny_read: Vec<PathEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NetworkFile {
    pub(super) connect: Option<Ports>,
    pub(super) bind: Option<Ports>,
    pub(super) udp: Option<Reach>,
    #[serde(default)]
    pub(super) unix_sockets: Vec<PathEntry>,
    pub(super) unix_datagram: Option<Reach>,
    #[serde(default)]
    pub(super) allow: Vec<Destination>,
    pub(super) allow_local: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScopesFile {
    pub(super) signals: Option<bool>,
    pub(super) abstract_unix_sockets: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LimitsFile {
    pub(super) open_files: Option<u64>,
    pub(super) processes: Option<u64>,
    pub(super) core_size: Option<Size>,
    pub(super) address_space: Option<Size>,
    #[serde(default, deserialize_with = "deserialize_duration")]
    pub(super) timeout: Option<Duration>,
    /// The job's cgroup's limits (supervise/cgroup/limits.rs).
    pub(super) memory: Option<Size>,
    pub(super) cpus: Option<f64>,
    pub(super) pids: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CompatibilityFile {
    pub(super) network: Option<Level>,
    pub(super) scopes: Option<Level>,
    pub(super) seccomp: Option<Level>,
}

/// A path: a string, or a table `{ path = "...", missing = "..." }`.
#[derive(Debug)]
pub(super) struct PathEntry {
    pub(super) path: String,
    pub(super) missing: Option<Missing>,
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

/// A size in bytes: an integer, or a string with a binary suffix (`"512M"`, `"8GiB"`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Size(pub(super) u64);

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
    crate::words::parse_duration(&text)
        .map(Some)
        .map_err(|e| de::Error::custom(format!("{e} (examples: \"90s\", \"15m\", \"2h\")")))
}
