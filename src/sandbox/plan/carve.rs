//! Carving: a read rule over a denied path (a credential store) or `/dev` becomes rules around it.
//! It never grants more than the rule it carves: only entries beside the way down to what is denied.

use std::fs;
use std::path::{Path, PathBuf};

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
pub(super) fn carve(read: Vec<PathBuf>, denied: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
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
        carve_dir(&rule, &under, &mut out, &mut list);
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
fn carve_dir(dir: &Path, under: &[&Path], out: &mut Vec<PathBuf>, list: &mut Vec<PathBuf>) {
    list.push(dir.to_path_buf());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if under.contains(&path.as_path()) {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        let deeper: Vec<&Path> = under
            .iter()
            .copied()
            .filter(|d| d.starts_with(&path))
            .collect();
        if deeper.is_empty() {
            out.push(path);
        } else if kind.is_dir() {
            carve_dir(&path, &deeper, out, list);
        }
    }
}
