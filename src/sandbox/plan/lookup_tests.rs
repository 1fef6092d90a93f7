//! `Lookup` against the resolution it replaced: on a tree of hostile symbolic links (into and out
//! of the tree, to `/`, dangling, looping, chains past the kernel's limit, trailing slashes, `..`,
//! another user's), every path written every way resolves to exactly what the old code made of it,
//! with one `Lookup` shared by all (as a policy's resolution shares it) in two orders, and with a
//! fresh one each. `reference` is the old resolution, kept word for word.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use super::lookup::Lookup;
use super::resolve::{granted, missing, resolve_rule};
use super::{expand, Access, Outcome, Resolved};
use crate::sandbox::credentials::named_stores;
use crate::sandbox::policy::{Missing, PathRule};

/// The resolution of one rule before `Lookup`, unchanged.
fn reference(rule: &PathRule, access: Access) -> Resolved {
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
    if let Some((link, owner)) = foreign_link(Path::new(&expanded)) {
        let why = format!(
            "{} is a symbolic link of another user (uid {owner}); isolate follows no other user's \
             link into a rule (one planted in /tmp would aim the rule anywhere)",
            link.display()
        );
        if out.access == Access::Deny {
            return missing(out, rule.missing, why, None);
        }
        out.detail = Some(why);
        return out;
    }
    match fs::canonicalize(&expanded) {
        Ok(path) => granted(out, path),
        Err(e) if out.access == Access::Deny && e.kind() == std::io::ErrorKind::NotFound => {
            let path = Path::new(&expanded);
            let parent = path.parent().and_then(|p| fs::canonicalize(p).ok());
            match (parent, path.file_name()) {
                (Some(parent), Some(name)) if parent.is_dir() => {
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

fn foreign_link(path: &Path) -> Option<(PathBuf, u32)> {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::getuid().as_raw();
    let mut walked = PathBuf::new();
    for part in path.components() {
        walked.push(part);
        let Ok(meta) = fs::symlink_metadata(&walked) else {
            return None;
        };
        if meta.file_type().is_symlink() && meta.uid() != me && meta.uid() != 0 {
            return Some((walked, meta.uid()));
        }
    }
    None
}

/// A tree of every kind of link a hostile home or /tmp could hold, under `root`. Another user's
/// links only where this user may give a link away (root).
fn hostile_tree(root: &Path) -> std::os::unix::net::UnixListener {
    let at = |p: &str| root.join(p);
    for dir in [
        "d/sub",
        "d/locked/in",
        "home/.config",
        "home/.local/share",
        "cfg/gh",
    ] {
        fs::create_dir_all(at(dir)).unwrap();
    }
    for file in [
        "d/f",
        "d/sub/g",
        "home/.netrc",
        "cfg/gh/hosts.yml",
        "d/locked/in/x",
    ] {
        fs::write(at(file), "x").unwrap();
    }
    let socket = std::os::unix::net::UnixListener::bind(at("d/sock")).unwrap();
    let links: &[(&str, String)] = &[
        ("abs", at("d").display().to_string()),
        ("rel", "d".into()),
        ("root", "/".into()),
        ("dot", ".".into()),
        ("up", "..".into()),
        ("d/back", "../d".into()),
        ("dangling", "nowhere".into()),
        ("dangling_deep", "missing/deeper".into()),
        ("dangling_abs", "/nonexistent-isolate-test/x".into()),
        ("file", "d/f".into()),
        ("loop_a", "loop_b".into()),
        ("loop_b", "loop_a".into()),
        ("self", "self".into()),
        ("trail", "d/".into()),
        ("trail_file", "d/f/".into()),
        ("trail_missing", "missing/".into()),
        ("trail_dotdot", "d/sub/..".into()),
        ("sock_link", "d/sock".into()),
        ("to_etc", "/etc".into()),
        ("home/.ssh", "../cfg".into()),
        ("home/.aws", "/".into()),
        ("home/.kube", at("cfg").display().to_string()),
        ("home/.gnupg", "missing".into()),
        ("home/.config/gh", "../../cfg/gh".into()),
        ("home/.local/share/keyrings", "/etc/passwd".into()),
        ("home/.docker", "../home".into()),
    ];
    for (name, target) in links {
        symlink(target, at(name)).unwrap();
    }
    // Chains of links to d: within glibc's limit of 40 and past it.
    for n in [39usize, 40, 41, 45] {
        for i in 0..n {
            let next = match i + 1 == n {
                true => "d".to_string(),
                false => format!("chain{n}_{}", i + 1),
            };
            symlink(next, at(&format!("chain{n}_{i}"))).unwrap();
        }
    }
    fs::set_permissions(at("d/locked"), fs::Permissions::from_mode(0o000)).unwrap();
    if nix::unistd::getuid().is_root() {
        for (name, target) in [
            ("theirs", "d"),
            ("d/theirs", "sub"),
            ("theirs_gone", "nowhere"),
        ] {
            symlink(target, at(name)).unwrap();
            let c = std::ffi::CString::new(at(name).into_os_string().into_encoded_bytes()).unwrap();
            // SAFETY: lchown of a path this test made, through a valid C string.
            assert_eq!(unsafe { libc::lchown(c.as_ptr(), 4242, 4242) }, 0);
        }
    }
    socket
}

/// Every entry of the tree, then every suffix a policy could write after it.
fn written_paths(root: &Path) -> Vec<String> {
    let mut bases = vec![String::new()];
    for entry in fs::read_dir(root)
        .unwrap()
        .chain(fs::read_dir(root.join("home")).unwrap())
    {
        let path = entry.unwrap().path();
        bases.push(path.strip_prefix(root).unwrap().display().to_string());
    }
    bases.extend(
        [
            "d/sub",
            "d/theirs",
            "d/back",
            "d/locked/in",
            "home/.config/gh",
        ]
        .map(String::from),
    );
    let suffixes = [
        "",
        "/",
        "/.",
        "/..",
        "/./f",
        "//f",
        "/f",
        "/f/",
        "/f/..",
        "/sub",
        "/sub/g",
        "/g",
        "/sock",
        "/missing",
        "/missing/x",
        "/../d/f",
        "/x/..",
        "/hosts.yml",
        "/in/x",
        "/passwd",
        "/.netrc",
    ];
    let mut out = Vec::new();
    for base in &bases {
        for suffix in suffixes {
            out.push(format!("{}/{base}{suffix}", root.display()));
        }
    }
    out.extend(
        [
            "/",
            "/etc",
            "/etc/passwd",
            "/nonexistent-isolate-test/x",
            "relative/x",
            "",
            "/a\0b",
        ]
        .map(String::from),
    );
    out
}

/// Each path under every access, and under every `missing` as a write path (the only place
/// `missing` asks the filesystem anything of its own: can it be made).
fn rules(paths: &[String]) -> Vec<(PathRule, Access)> {
    let accesses = [
        (Access::Read, Missing::Note),
        (Access::Write, Missing::Error),
        (Access::Write, Missing::Ignore),
        (Access::Write, Missing::Create),
        (Access::WriteFile, Missing::Create),
        (Access::Connect, Missing::Create),
        (Access::Deny, Missing::Ignore),
    ];
    let mut out = Vec::new();
    for path in paths {
        for (access, missing) in accesses {
            out.push((
                PathRule {
                    path: path.clone(),
                    missing,
                },
                access,
            ));
        }
    }
    out
}

fn assert_same(rules: &[(PathRule, Access)], lookup: &mut Option<Lookup>) {
    for (rule, access) in rules {
        let mut fresh = Lookup::new();
        let new = resolve_rule(rule, *access, lookup.as_mut().unwrap_or(&mut fresh));
        let old = reference(rule, *access);
        assert_eq!(
            format!("{new:?}"),
            format!("{old:?}"),
            "{:?} as {access:?}",
            rule.path
        );
    }
}

#[test]
fn hostile_links_resolve_as_before_whatever_was_looked_up_first() {
    let tmp = tempfile::tempdir().unwrap();
    let _socket = hostile_tree(tmp.path());
    let rules = rules(&written_paths(tmp.path()));
    assert!(rules.len() > 5_000, "{}", rules.len());
    assert_same(&rules, &mut Some(Lookup::new()));
    let reversed: Vec<_> = rules.iter().rev().cloned().collect();
    assert_same(&reversed, &mut Some(Lookup::new()));
    assert_same(&rules, &mut None);
    // Both ways saw the links as links: the tree is what the cases need.
    let loops = rules
        .iter()
        .find(|(r, _)| r.path.ends_with("/loop_a"))
        .unwrap();
    let detail = resolve_rule(&loops.0, loops.1, &mut Lookup::new()).detail;
    assert!(detail.unwrap().contains("os error 40"), "ELOOP");
    fs::set_permissions(
        tmp.path().join("d/locked"),
        fs::Permissions::from_mode(0o700),
    )
    .unwrap();
}

#[test]
fn the_credential_stores_of_a_hostile_home_resolve_as_before() {
    let tmp = tempfile::tempdir().unwrap();
    let _socket = hostile_tree(tmp.path());
    let home = tmp.path().join("home");
    let rules: Vec<_> = named_stores()
        .map(|s| home.join(s.trim_start_matches("~/")).display().to_string())
        .map(|path| {
            (
                PathRule {
                    path,
                    missing: Missing::Ignore,
                },
                Access::Deny,
            )
        })
        .collect();
    assert_same(&rules, &mut Some(Lookup::new()));
    // What the links made of them: out of home (`.ssh`, `.kube`), to `/` (`.aws`), to a file.
    let granted = |store: &str| {
        let (rule, access) = rules.iter().find(|(r, _)| r.path.ends_with(store)).unwrap();
        resolve_rule(rule, *access, &mut Lookup::new()).path
    };
    let cfg = fs::canonicalize(tmp.path().join("cfg")).unwrap();
    assert_eq!(granted("/.ssh"), Some(cfg.clone()));
    assert_eq!(granted("/.aws"), Some(PathBuf::from("/")));
    assert_eq!(granted("/.config/gh"), Some(cfg.join("gh")));
    assert_eq!(granted("/keyrings"), Some(PathBuf::from("/etc/passwd")));
}

#[test]
fn each_directory_is_looked_up_once_for_all_the_paths_in_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fs::canonicalize(tmp.path()).unwrap().join("home");
    fs::create_dir(&dir).unwrap();
    let depth = dir.components().count();
    let names: Vec<String> = (0..50).map(|i| format!(".store{i}")).collect();
    let mut lookup = Lookup::new();
    for name in &names {
        let rule = PathRule {
            path: dir.join(name).display().to_string(),
            missing: Missing::Ignore,
        };
        let r = resolve_rule(&rule, Access::Deny, &mut lookup);
        assert_eq!(r.path, Some(dir.join(name)), "{r:?}");
    }
    // One lstat per missing store, and the way down once (the old resolution: ~5 lookups for
    // each directory above each of them, and as many again for its parent).
    assert!(
        lookup.calls <= names.len() + depth + 1,
        "{} lookups for {} paths {depth} deep",
        lookup.calls,
        names.len()
    );
}
