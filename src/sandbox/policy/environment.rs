//! The `[environment]` section: what is removed, set and defaulted in a job's environment, and
//! the name patterns that remove credentials. Applies to a list of variables; reads no file.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Variables removed before exec.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Variables set before exec (a leading `~/` is the home directory; `$TMPDIR`, `$ISOLATE_JOB`
    /// and the job's other own variables are theirs).
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Variables set before exec unless the caller has them (expanded as `set` is).
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
/// in any case (`github_token` is a `*_TOKEN`). Compares bytes, ASCII letters in either case: each
/// run's variables are matched against every pattern, so nothing here allocates.
pub fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.as_bytes().split(|&b| b == b'*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = strip_prefix(name.as_bytes(), first) else {
        return false;
    };
    // Every part between two stars at its first place left, then the last at the very end.
    let Some(mut part) = parts.next() else {
        return rest.is_empty();
    };
    for next in parts {
        match find(rest, part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
        part = next;
    }
    rest.len() >= part.len() && rest[rest.len() - part.len()..].eq_ignore_ascii_case(part)
}

fn strip_prefix<'a>(name: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let head = name.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &name[prefix.len()..])
}

/// Where `part` first occurs in `name`, in any case.
fn find(name: &[u8], part: &[u8]) -> Option<usize> {
    (0..=name.len().checked_sub(part.len())?)
        .find(|&at| name[at..at + part.len()].eq_ignore_ascii_case(part))
}

impl Environment {
    /// Whether this section removes `name`.
    pub fn removes(&self, name: &str) -> bool {
        self.remove.iter().any(|r| r == name)
            || (self.remove_matching.iter().any(|p| matches(p, name))
                && !self.keep.iter().any(|k| k == name))
    }

    /// Whether this section removes `name` as a secret (by a pattern, not kept): what the start
    /// line names.
    pub fn removes_secret(&self, name: &str) -> bool {
        self.remove_matching.iter().any(|p| matches(p, name))
            && !self.keep.iter().any(|k| k == name)
    }

    /// `env` as this section makes it: its variables removed, then its values set, then its
    /// defaults where `env` has none. `job`: the variables isolate sets for the job (`TMPDIR`,
    /// `ISOLATE_JOB`, …), which a value may name.
    pub fn apply(&self, env: &mut Vec<(OsString, OsString)>, job: &[(&str, &OsStr)]) {
        env.retain(|(k, _)| !k.to_str().is_some_and(|k| self.removes(k)));
        let home = env
            .iter()
            .find(|(k, _)| k == "HOME")
            .map(|(_, v)| v.clone());
        let value = |v: &str| expand(v, home.as_deref(), job);
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

/// `value` with a leading `~/` made the home directory, and each `$NAME` or `${NAME}` that names one
/// of the job's own variables (`job`) made its value; anything else as written (`$HOME` too: a
/// value is not a shell word).
fn expand(value: &str, home: Option<&OsStr>, job: &[(&str, &OsStr)]) -> OsString {
    let mut out = OsString::new();
    let mut rest = match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => {
            out.push(Path::new(home).join(""));
            rest
        }
        _ => value,
    };
    while let Some(at) = rest.find('$') {
        out.push(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            },
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        match job.iter().find(|(k, _)| *k == name).filter(|_| len > 0) {
            Some((_, v)) => {
                out.push(v);
                rest = &after[len..];
            }
            None => {
                out.push("$");
                rest = after;
            }
        }
    }
    out.push(rest);
    out
}
