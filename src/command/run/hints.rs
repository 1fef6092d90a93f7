//! Hints at the end of a job, where a user would otherwise be stuck without a word: a known agent
//! run under a policy that does not let it write its state (it often goes on, logging EACCES
//! nobody reads), and a command that failed while the home directory was read-only to it.

use std::path::{Path, PathBuf};

use crate::sandbox::agent::Detected;
use crate::sandbox::plan::expand;
use crate::sandbox::policy;

/// What the job could write: its policy's write rules, its worktree, `--allow-write`.
pub(super) struct Writable<'a> {
    pub(super) dirs: &'a [PathBuf],
    pub(super) files: &'a [PathBuf],
}

impl Writable<'_> {
    fn covers(&self, path: &Path) -> bool {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.dirs.iter().any(|d| path.starts_with(d)) || self.files.contains(&path)
    }
}

/// The hint for a job that ran `command` under `policy_name` and ended with `status`, if any.
pub(super) fn after(
    command: &str,
    agent: Option<&Detected>,
    policy_name: &str,
    writable: &Writable,
    status: i32,
) -> Option<String> {
    match agent {
        Some(found) if found.agent.profile != policy_name => known(found, policy_name, writable),
        Some(_) => None,
        None if status != 0 => unknown(command, policy_name, writable),
        None => None,
    }
}

/// A known agent whose profile grants state the job's policy did not.
fn known(found: &Detected, policy_name: &str, writable: &Writable) -> Option<String> {
    let profile = policy::load(found.agent.profile).ok()?;
    let fs = &profile.policy.filesystem;
    let lacking: Vec<&str> = fs
        .write
        .iter()
        .chain(&fs.write_files)
        .filter(|rule| {
            // A place that does not exist and that the profile would not make is none to name.
            expand(&rule.path).is_ok_and(|path| {
                let path = Path::new(&path);
                let there = path.exists() || rule.missing == policy::Missing::Create;
                there && !writable.covers(path)
            })
        })
        .map(|rule| rule.path.as_str())
        .collect();
    if lacking.is_empty() {
        return None;
    }
    let profile = found.agent.profile;
    Some(format!(
        "{} keeps its state in {}, which policy {policy_name} does not let the job write: it may \
         have failed or lost that state. Its profile does: --policy {profile} (or a profile of \
         your own with extends = [\"{policy_name}\", \"{profile}\"])",
        found.agent.name,
        lacking.join(", ")
    ))
}

/// A failed command that is no known agent, with the home directory read-only: where tools keep
/// state there, and how to grant it.
fn unknown(command: &str, policy_name: &str, writable: &Writable) -> Option<String> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    if writable.covers(&home) {
        return None;
    }
    let name = Path::new(command)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    let places = [
        format!(".{name}"),
        format!(".config/{name}"),
        format!(".cache/{name}"),
        format!(".local/share/{name}"),
        format!(".local/state/{name}"),
    ];
    // A tool whose state is a door or a secret (ssh's keys, git's configuration, cargo's bin
    // directory) gets no hint to grant it.
    if places.iter().any(|place| sensitive(place)) {
        return None;
    }
    let found: Vec<String> = places
        .iter()
        .filter(|place| {
            let path = home.join(place);
            path.exists() && !writable.covers(&path)
        })
        .map(|place| format!("~/{place}"))
        .collect();
    // Never a directory that does not exist: a failed `bash` has no `~/.bash` to grant.
    if found.is_empty() {
        return None;
    }
    let flags: Vec<String> = found.iter().map(|p| format!("--allow-write {p}")).collect();
    Some(format!(
        "under policy {policy_name} the job could not write {}, where {name} may keep its state: \
         {} grants it",
        found.join(", "),
        flags.join(" ")
    ))
}

/// Places under the home directory that a hint never offers to make writable: credential stores,
/// and what runs code outside the sandbox later (shell and git configuration, autostart, toolchain
/// binaries).
fn sensitive(place: &str) -> bool {
    const DOORS: [&str; 14] = [
        ".ssh",
        ".gnupg",
        ".config/git",
        ".cargo",
        ".rustup",
        ".local/bin",
        ".config/autostart",
        ".config/systemd",
        ".config/environment.d",
        ".npm",
        ".bashrc",
        ".profile",
        ".zshrc",
        ".config/fish",
    ];
    DOORS.contains(&place)
        || crate::sandbox::credentials::named_stores()
            .filter_map(|s| s.strip_prefix("~/"))
            .any(|s| s == place || s.starts_with(&format!("{place}/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_hint_offers_a_door_or_a_secret() {
        let writable = Writable {
            dirs: &[],
            files: &[],
        };
        for tool in ["ssh", "git", "cargo", "aws", "gnupg", "docker", "kube"] {
            assert_eq!(unknown(tool, "default", &writable), None, "{tool}");
        }
        // Nothing of `mytool`'s in the home directory: no hint naming a directory that is not there.
        assert!(unknown("mytool", "default", &writable).is_none());
    }

    #[test]
    fn a_path_is_covered_by_a_directory_above_it_or_the_file_itself() {
        let dirs = [PathBuf::from("/w/tree")];
        let files = [PathBuf::from("/w/file")];
        let writable = Writable {
            dirs: &dirs,
            files: &files,
        };
        assert!(writable.covers(Path::new("/w/tree/a/b")));
        assert!(writable.covers(Path::new("/w/file")));
        assert!(!writable.covers(Path::new("/w/treehouse")));
        assert!(!writable.covers(Path::new("/w")));
    }
}
