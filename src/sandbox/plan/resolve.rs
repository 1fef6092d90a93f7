//! Resolution of a policy's path rules: expanded, absolute, canonical, checked against their access,
//! and what a missing one does. Creates nothing (create.rs makes a `missing = "create"` path), and
//! never follows another user's symbolic link into a rule. Every lookup goes through one `Lookup`
//! per policy, which makes each only once.

use std::path::{Path, PathBuf};

use super::create::creatable;
use super::lookup::Lookup;
use super::{expand, Access, Outcome, Resolved};
use crate::sandbox::policy::{Missing, PathRule, Policy};

/// Resolves every path rule of `policy`, creating nothing (a `missing = "create"` path that does
/// not exist is `WillCreate`).
pub(super) fn resolve_policy_paths(policy: &Policy) -> Vec<Resolved> {
    let fs = &policy.filesystem;
    let lists = [
        (&fs.read, Access::Read),
        (&fs.write, Access::Write),
        (&fs.write_files, Access::WriteFile),
        (&policy.network.unix_sockets, Access::Connect),
        (&fs.deny_read, Access::Deny),
    ];
    let mut lookup = Lookup::new();
    lists
        .into_iter()
        .flat_map(|(rules, access)| rules.iter().map(move |rule| (rule, access)))
        .map(|(rule, access)| resolve_rule(rule, access, &mut lookup))
        .collect()
}

pub(super) fn resolve_rule(rule: &PathRule, access: Access, lookup: &mut Lookup) -> Resolved {
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
        Err(e) => return missing(out, rule.missing, e.to_string(), None),
    };
    if !Path::new(&expanded).is_absolute() {
        out.detail = Some(format!("{expanded} is not an absolute path"));
        return out;
    }
    if let Some((link, owner)) = lookup.foreign_link(Path::new(&expanded)) {
        let why = format!(
            "{} is a symbolic link of another user (uid {owner}); isolate follows no other user's \
             link into a rule (one planted in /tmp would aim the rule anywhere)",
            link.display()
        );
        // A store denied there is not the user's: another user's link holds its place. Skipped
        // as a missing one is, never a refusal of every run (another user could plant one in
        // /tmp where a built-in store lies, `/tmp/krb5cc_$UID`).
        if out.access == Access::Deny {
            return missing(out, rule.missing, why, None);
        }
        out.detail = Some(why);
        return out;
    }
    match lookup.canonicalize(Path::new(&expanded)) {
        Ok(path) => granted_with(out, path, lookup),
        // A store that is not there yet is denied all the same where its directory is: a job that
        // logs in (`docker login`, `gh auth login`) makes it, and must not read it back.
        Err(e) if out.access == Access::Deny && e.kind() == std::io::ErrorKind::NotFound => {
            let path = Path::new(&expanded);
            let parent = path.parent().and_then(|p| lookup.canonicalize(p).ok());
            match (parent, path.file_name()) {
                (Some(parent), Some(name)) if lookup.is_dir(&parent) => {
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

/// A path that exists: a rule, after checking that its kind fits its access.
pub(super) fn granted(out: Resolved, path: PathBuf) -> Resolved {
    granted_with(out, path, &mut Lookup::new())
}

/// `granted`, asking `lookup`.
fn granted_with(mut out: Resolved, path: PathBuf, lookup: &mut Lookup) -> Resolved {
    let is_dir = lookup.is_dir(&path);
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
        Access::Connect if !is_dir && !lookup.is_socket(&path) => {
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

pub(super) fn missing(
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
