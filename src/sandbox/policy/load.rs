//! Loading a policy: the profile or file a reference names, its `extends` chain merged in (a cycle
//! refused), then what every profile refuses put first (sandbox/credentials/).

use std::path::{Path, PathBuf};

use super::file::{Extends, File};
use super::merge::merge;
use super::profiles::{find, is_file_reference, Origin};
use super::{Loaded, Missing, PathRule, Policy};
use crate::error::{Error, Result};
use crate::sandbox::credentials;

/// `NAME` of a built-in or user profile, or a path to a TOML file (it contains `/` or ends in
/// `.toml`), with its `extends` chain merged in.
pub fn load(name_or_file: &str) -> Result<Loaded> {
    let mut stack = Vec::new();
    let (name, mut policy) = load_chain(name_or_file, Path::new("."), &mut stack)?;
    // What every profile refuses, first (sandbox/credentials/).
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
