//! Where a profile is: the built-in ones (the files of `policy/`, compiled in), the user's own in
//! `$XDG_CONFIG_HOME/isolate/policy`, or a file named by path. A user's profile never takes a
//! built-in one's name.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The built-in profiles, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../../policy/default.toml")),
    ("offline", include_str!("../../../policy/offline.toml")),
    ("strict", include_str!("../../../policy/strict.toml")),
    (
        "claude-code",
        include_str!("../../../policy/claude-code.toml"),
    ),
    ("codex", include_str!("../../../policy/codex.toml")),
    ("aider", include_str!("../../../policy/aider.toml")),
    ("opencode", include_str!("../../../policy/opencode.toml")),
    ("gemini", include_str!("../../../policy/gemini.toml")),
];

/// Where a profile came from: the identity that detects an `extends` cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    Builtin(&'static str),
    File(PathBuf),
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

pub(super) fn is_file_reference(reference: &str) -> bool {
    reference.contains('/') || reference.ends_with(".toml")
}

/// A profile's text, where it came from, the name it is reported under and the label its errors
/// carry (the file's path for files, so that an error names the file).
pub(super) struct Found {
    pub(super) origin: Origin,
    pub(super) name: String,
    pub(super) label: String,
    pub(super) text: String,
}

pub(super) fn find(reference: &str, from_dir: &Path) -> Result<Found> {
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
