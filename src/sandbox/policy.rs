//! The policy as the user wrote it: TOML, every key known (a typo in a security policy must not
//! silently widen or narrow it). Built-in profiles are the files of `policy/`, compiled in.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};

/// The built-in profiles, by name.
pub const BUILTIN: &[(&str, &str)] = &[("default", include_str!("../../policy/default.toml"))];

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    pub filesystem: Filesystem,
    #[serde(default)]
    pub scopes: Scopes,
    #[serde(default)]
    pub environment: Environment,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filesystem {
    /// Paths readable and executable, with everything beneath them.
    #[serde(default)]
    pub read: Vec<String>,
    /// Extra writable paths, with everything beneath them.
    #[serde(default)]
    pub write: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scopes {
    /// The job may not signal processes outside its sandbox (Landlock ABI 6).
    #[serde(default = "yes")]
    pub signals: bool,
    /// The job may not connect to abstract unix sockets created outside it (Landlock ABI 6).
    #[serde(default = "yes")]
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

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Variables removed before exec.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Variables set before exec.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
}

/// A loaded policy and the name it is reported under.
pub struct Loaded {
    pub name: String,
    pub policy: Policy,
}

/// `NAME` of a built-in profile, or a path to a TOML file.
pub fn load(name_or_file: &str) -> Result<Loaded> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_file) {
        return parse(name, text).map(|policy| Loaded {
            name: name.to_string(),
            policy,
        });
    }
    let path = Path::new(name_or_file);
    if !name_or_file.contains('/') && !path.exists() {
        let known: Vec<_> = BUILTIN.iter().map(|(n, _)| *n).collect();
        return Err(Error::Policy {
            source_name: name_or_file.to_string(),
            message: format!("no such profile (built-in: {})", known.join(", ")),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::Policy {
        source_name: path.display().to_string(),
        message: format!("cannot read: {e}"),
    })?;
    let shown = path.display().to_string();
    parse(&shown, &text).map(|policy| Loaded {
        name: shown,
        policy,
    })
}

fn parse(source_name: &str, text: &str) -> Result<Policy> {
    toml::from_str(text).map_err(|e| Error::Policy {
        source_name: source_name.to_string(),
        message: e.to_string().trim_end().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_profile_parses() {
        for (name, _) in BUILTIN {
            let loaded = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                !loaded.policy.filesystem.read.is_empty(),
                "{name} reads nothing"
            );
        }
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_it() {
        let err = parse("typo.toml", "[filesystem]\nwrtie = [\"/tmp\"]\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("wrtie") && msg.contains("typo.toml"), "{msg}");
        assert!(msg.contains("line 2"), "{msg}");
    }
}
