//! The `[environment]` section: what is removed, set and defaulted in a job's environment, and
//! the name patterns that remove credentials. Applies to a list of variables; reads no file.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

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
