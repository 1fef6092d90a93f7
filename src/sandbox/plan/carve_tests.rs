//! `carve` against the carving it replaced (every denied path compared with every entry of every
//! directory on the way down), kept word for word in `reference`: the same read and list rules for
//! a home full of stores, links among them, a store that is a directory of stores, the stores of a
//! second home, and `/dev`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::carve::carve;
use super::devices::present;
use super::DEVICE_READS;
use crate::sandbox::credentials::named_stores;

fn reference(read: Vec<PathBuf>, denied: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
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

/// A home with some stores present (files, directories, one a link), others missing, and entries
/// beside them; a second home beside it.
fn homes(root: &Path) -> (PathBuf, PathBuf) {
    let home = root.join("home");
    let other = root.join("real");
    for dir in [
        ".ssh",
        ".config/gh",
        ".config/other",
        ".local/share/keyrings",
        ".cargo/bin",
    ] {
        fs::create_dir_all(home.join(dir)).unwrap();
        fs::create_dir_all(other.join(dir)).unwrap();
    }
    for file in [
        ".netrc",
        ".bash_history",
        ".ssh/id_ed25519",
        ".cargo/config.toml",
        "notes",
    ] {
        fs::write(home.join(file), "x").unwrap();
    }
    fs::write(home.join(".config/gh/hosts.yml"), "x").unwrap();
    symlink("/etc", home.join(".config/link")).unwrap();
    symlink(".ssh", home.join(".aws")).unwrap();
    (home, other)
}

#[test]
fn carving_a_home_of_stores_makes_the_rules_it_made_before() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let (home, other) = homes(&root);
    let mut denied: Vec<PathBuf> = named_stores()
        .flat_map(|s| [home.join(&s[2..]), other.join(&s[2..])])
        .collect();
    // A store inside a store, one denied twice, and one outside every read rule.
    denied.extend([
        home.join(".ssh/id_ed25519"),
        home.join(".netrc"),
        "/nowhere".into(),
    ]);
    let reads: [Vec<PathBuf>; 4] = [
        vec![root.clone()],
        vec![home.clone(), other.join(".config"), "/dev".into()],
        vec![
            home.join(".ssh"),
            home.join(".config/gh/hosts.yml"),
            root.join("real"),
        ],
        // (Never `/` itself: /tmp changes under it while other tests run.)
        vec![root.join("real"), home.clone()],
    ];
    for read in reads {
        let new = carve(read.clone(), &denied, &[]);
        assert_eq!(new, reference(read.clone(), &denied), "{read:?}");
        // Both carved: the stores present are kept back, what lies beside them is read.
        if read.contains(&root) || read.contains(&home) {
            assert!(new.0.contains(&home.join("notes")), "{:?}", new.0);
            assert!(new.1.contains(&home), "{:?}", new.1);
            assert!(!new.0.iter().any(|r| r.starts_with(home.join(".ssh"))));
        }
    }
}
