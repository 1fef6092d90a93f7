//! The tree an index would write, hashed in memory, against `git write-tree` of the same index;
//! and the indexes it must not vouch for.

use super::super::written_tree::written_tree;
use super::*;

/// The index of the work tree `wt`, as the inspection reads it.
fn index_of(wt: &Path) -> gix::index::File {
    let repo = gix::open_opts(wt.join(".git"), gix::open::Options::isolated()).unwrap();
    repo.open_index().unwrap()
}

fn hashed(wt: &Path) -> Option<String> {
    written_tree(&index_of(wt)).map(|(id, _)| id.to_string())
}

#[test]
fn an_index_hashes_to_the_tree_git_writes_of_it() {
    let f = fixture();
    // Names that sort differently as paths and as tree entries unless done right ("a.b" and
    // "a-b" before the directory "a", "a0" after it), deep directories, an executable, a link,
    // a gitlink, spaces and bytes past ASCII.
    for name in [
        "a/x",
        "a.b",
        "a-b",
        "a0",
        "a/b/c/d/e",
        "a/b.c",
        "a/b/c.d",
        "z z/é ü",
        "m/n/o",
    ] {
        write(&f.wt.join(name), name);
    }
    std::os::unix::fs::symlink("a0", f.wt.join("link")).unwrap();
    write(&f.wt.join("run.sh"), "#!/bin/sh\n");
    let mut perms = std::fs::metadata(f.wt.join("run.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(f.wt.join("run.sh"), perms).unwrap();
    git(&f.wt, &["add", "-A"]);
    let gitlink = format!("160000,{},sub/module", f.base);
    git(&f.wt, &["update-index", "--add", "--cacheinfo", &gitlink]);
    let want = git(&f.wt, &["write-tree"]);
    assert_eq!(hashed(&f.wt).as_deref(), Some(want.as_str()));
    let (_, entries) = written_tree(&index_of(&f.wt)).unwrap();
    let listed = git(&f.wt, &["ls-tree", "-r", "-t", &want]);
    assert_eq!(entries, listed.lines().count() as u64, "files and subtrees");

    // The checkout as it was: HEAD's own tree; and an empty index, the empty tree.
    git(&f.wt, &["reset", "-q", "--hard"]);
    let head = git(&f.wt, &["rev-parse", "HEAD^{tree}"]);
    assert_eq!(hashed(&f.wt).as_deref(), Some(head.as_str()));
    git(&f.wt, &["rm", "-q", "-r", "--cached", "."]);
    let empty = git(&f.wt, &["write-tree"]);
    assert_eq!(hashed(&f.wt).as_deref(), Some(empty.as_str()));
}

#[test]
fn an_index_with_a_conflict_or_an_intent_to_add_is_not_hashed() {
    let f = fixture();
    write(&f.wt.join("new.txt"), "new\n");
    git(&f.wt, &["add", "-N", "new.txt"]);
    assert_eq!(hashed(&f.wt), None, "intent to add");

    let f = fixture();
    let blob = git(&f.wt, &["rev-parse", "HEAD:a.txt"]);
    let mut input = String::new();
    for stage in 1..=3 {
        input.push_str(&format!("100644 {blob} {stage}\tc.txt\n"));
    }
    let mut cmd = git_cmd(&f.wt, &["update-index", "--index-info"]);
    cmd.stdin(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(hashed(&f.wt), None, "conflicted");
}

/// What the status tells from the hash: a staged change whose index no longer hashes to HEAD's
/// tree (a change of content, of mode, an added and a removed path) is counted, as before.
#[test]
fn a_staged_change_of_content_mode_or_path_is_counted() {
    for change in ["content", "mode", "added", "removed"] {
        let f = fixture();
        match change {
            "content" => write(&f.wt.join("a.txt"), "changed\n"),
            "mode" => {
                let path = f.wt.join("a.txt");
                let mut perms = std::fs::metadata(&path).unwrap().permissions();
                std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
                std::fs::set_permissions(&path, perms).unwrap();
            }
            "added" => write(&f.wt.join("src/new.rs"), "new\n"),
            _ => std::fs::remove_file(f.wt.join("b.txt")).unwrap(),
        }
        git(&f.wt, &["add", "-A"]);
        // The work tree as the index has it: only HEAD against the index sees the change.
        assert_eq!(git(&f.wt, &["diff", "--name-only"]), "", "{change}");
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!(got.modified, 1, "{change}: {got:?}");
    }
    let f = fixture();
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.modified, 0, "the checkout as cut: {got:?}");
}
