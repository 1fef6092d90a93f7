//! Carving: a read rule over a denied path (a credential store) or `/dev` becomes rules around it.
//! It never grants more than the rule it carves: only entries beside the way down to what is denied.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::{self, FileType};
use std::path::{Component, Path, PathBuf};

use super::devices::present;
use super::DEVICE_READS;

/// `read` with `/dev` and every `denied` path carved out of the rules that cover them: such a rule
/// becomes one to list its directory (and every one beneath: names are seen, never contents) and
/// one to read each entry beside the way down to what is denied, at every level; symbolic links
/// among them get no rule of their own (what they point to is judged where it lies). `/dev` gets
/// `DEVICE_READS` instead. A rule naming a denied path itself, or a path inside one, stays: that
/// is a profile re-allowing exactly its agent's own file. `/dev` is carved even from a rule that
/// names it. Returns the read rules and the list-only ones. Entries made after the job started,
/// beside the way down, are not readable to it.
///
/// A directory on the way down that cannot be listed (a job inside a job whose Landlock domain
/// does not list it: `/` under `strict`) has its entries taken from `known` instead: the paths
/// the outer job's rules grant (job/nest.rs). Each is carved as a listed entry would be, so that
/// list, whoever wrote it, only ever names entries: what is denied stays out, and nothing is read
/// that the outer domain does not grant anyway.
pub(super) fn carve(
    read: Vec<PathBuf>,
    denied: &[PathBuf],
    known: &[PathBuf],
) -> (Vec<PathBuf>, Vec<PathBuf>) {
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
        carve_dir(&rule, &under, known, (&mut out, &mut list));
    }
    if devices {
        out.extend(present(&DEVICE_READS));
    }
    out.sort();
    out.dedup();
    list.sort();
    list.dedup();
    (out, list)
}

/// `dir` listed, its entries read but those denied and those on the way to one (carved in turn).
/// `under` are all beneath `dir`; each is filed once under the entry of `dir` it lies in.
fn carve_dir(
    dir: &Path,
    under: &[&Path],
    known: &[PathBuf],
    (out, list): (&mut Vec<PathBuf>, &mut Vec<PathBuf>),
) {
    list.push(dir.to_path_buf());
    // Each entry with its type: the listing's, or for a known name its own lstat.
    let entries: Vec<(OsString, Option<FileType>)> = match fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| (e.file_name(), e.file_type().ok()))
            .collect(),
        Err(_) => known_names(dir, known)
            .into_iter()
            .map(|name| {
                let kind = fs::symlink_metadata(dir.join(&name)).ok();
                (name, kind.map(|m| m.file_type()))
            })
            .collect(),
    };
    let by_entry = by_entry(dir, under);
    for (name, kind) in entries {
        let path = dir.join(&name);
        let beneath = by_entry.get(name.as_os_str());
        if beneath.is_some_and(|b| b.denied) {
            continue;
        }
        let Some(kind) = kind else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        match beneath {
            None => out.push(path),
            Some(b) if kind.is_dir() => carve_dir(&path, &b.deeper, known, (&mut *out, &mut *list)),
            Some(_) => {}
        }
    }
}

/// The entries of `dir` that `known` paths lie in (each path's first component below `dir`),
/// once each.
fn known_names(dir: &Path, known: &[PathBuf]) -> Vec<OsString> {
    let mut names: Vec<OsString> = known
        .iter()
        .filter_map(|k| match k.strip_prefix(dir).ok()?.components().next()? {
            Component::Normal(name) => Some(name.to_os_string()),
            _ => None,
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What of `under` lies in one entry of a directory.
#[derive(Default)]
struct Beneath<'a> {
    /// The entry itself is denied.
    denied: bool,
    /// Every one of `under` in the entry or the entry itself (`Path::starts_with` the entry).
    deeper: Vec<&'a Path>,
}

/// `under` (each beneath `dir`) by the entry of `dir` each lies in: the first component of what is
/// left of it below `dir`.
fn by_entry<'a>(dir: &Path, under: &[&'a Path]) -> HashMap<&'a OsStr, Beneath<'a>> {
    let mut by_entry: HashMap<&OsStr, Beneath> = HashMap::new();
    for &d in under {
        let Ok(rest) = d.strip_prefix(dir) else {
            continue;
        };
        let mut parts = rest.components();
        let Some(Component::Normal(name)) = parts.next() else {
            continue;
        };
        let beneath = by_entry.entry(name).or_default();
        beneath.denied |= parts.next().is_none();
        beneath.deeper.push(d);
    }
    by_entry
}
