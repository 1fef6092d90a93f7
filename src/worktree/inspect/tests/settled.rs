//! The directories the walk passes by (settled.rs): exactly those holding nothing but what the
//! index names there, and the counts the same as a walk into every directory would make.

use std::collections::BTreeSet;
use std::os::unix::fs::symlink;

use super::*;
use crate::worktree::inspect::settled::settled;

/// A job repository whose tracked files lie in `deep/a/b/` and `deep/c/`, beside `src/`, a link
/// `deep/link` and the fixture's files.
fn tree() -> Fixture {
    let f = fixture();
    write(&f.wt.join("deep/a/b/one.rs"), "1\n");
    write(&f.wt.join("deep/a/b.rs"), "b\n");
    write(&f.wt.join("deep/c/two.rs"), "2\n");
    symlink("c/two.rs", f.wt.join("deep/link")).unwrap();
    git(&f.wt, &["add", "deep"]);
    git(&f.wt, &["commit", "-q", "-m", "deep"]);
    f
}

/// The settled directories of the job repository at `wt`, as its index is now.
fn settled_in(wt: &Path) -> BTreeSet<String> {
    let repo = gix::open(wt).unwrap();
    let index = repo.index_or_empty().unwrap();
    settled(wt, &index)
        .into_iter()
        .map(|dir| dir.to_string())
        .collect()
}

fn set(dirs: &[&str]) -> BTreeSet<String> {
    dirs.iter().map(|d| d.to_string()).collect()
}

const ALL: [&str; 5] = ["deep", "deep/a", "deep/a/b", "deep/c", "src"];

#[test]
fn a_clean_tree_is_settled_throughout() {
    let f = tree();
    assert_eq!(settled_in(&f.wt), set(&ALL));
}

#[test]
fn a_name_the_index_lacks_unsettles_its_directory_and_those_above() {
    let f = tree();
    write(&f.wt.join("deep/a/b/new.rs"), "untracked\n");
    assert_eq!(settled_in(&f.wt), set(&["deep/c", "src"]));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.untracked, got.modified), (1, 0), "{got:?}");
}

#[test]
fn an_ignored_name_unsettles_it_too_and_is_counted() {
    let f = tree();
    write(&f.wt.join("deep/c/target/out"), "built\n");
    assert_eq!(settled_in(&f.wt), set(&["deep/a", "deep/a/b", "src"]));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.untracked, got.ignored), (0, 1), "{got:?}");
}

#[test]
fn a_tracked_file_of_another_kind_unsettles_its_directory() {
    // A file turned into a directory of new files, a link turned into a file, a directory turned
    // into a link to a settled one.
    let f = tree();
    std::fs::remove_file(f.wt.join("deep/a/b.rs")).unwrap();
    write(&f.wt.join("deep/a/b.rs/inside.rs"), "work\n");
    std::fs::remove_file(f.wt.join("deep/link")).unwrap();
    write(&f.wt.join("deep/link"), "a file now\n");
    std::fs::remove_dir_all(f.wt.join("src")).unwrap();
    symlink("deep/c", f.wt.join("src")).unwrap();
    assert_eq!(settled_in(&f.wt), set(&["deep/a/b", "deep/c"]));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert!(got.untracked >= 1 && got.modified >= 3, "{got:?}");
}

#[test]
fn a_git_directory_a_fifo_or_a_socket_unsettles_its_directory() {
    let f = tree();
    std::fs::create_dir(f.wt.join("deep/a/b/.git")).unwrap();
    nix::unistd::mkfifo(&f.wt.join("deep/c/pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(f.wt.join("src/sock")).unwrap();
    assert_eq!(settled_in(&f.wt), BTreeSet::new());
}

#[test]
fn a_deleted_tracked_file_leaves_its_directory_settled() {
    // Nothing for the walk to find there; the comparison counts the deletion.
    let f = tree();
    std::fs::remove_file(f.wt.join("deep/c/two.rs")).unwrap();
    assert_eq!(settled_in(&f.wt), set(&ALL));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked), (1, 0), "{got:?}");
}

#[test]
fn a_gitlink_unsettles_the_directory_holding_it() {
    let f = tree();
    let commit = git(&f.wt, &["rev-parse", "HEAD"]);
    let info = format!("160000,{commit},deep/c/module");
    git(&f.wt, &["update-index", "--add", "--cacheinfo", &info]);
    std::fs::create_dir(f.wt.join("deep/c/module")).unwrap();
    assert_eq!(settled_in(&f.wt), set(&["deep/a", "deep/a/b", "src"]));
}

#[test]
fn the_walk_counts_the_same_with_directories_passed_by() {
    // Untracked and ignored names at every depth, beside settled directories: counted as git's
    // status counts them (one by one; an ignored directory once).
    let f = tree();
    write(&f.wt.join("deep/a/notes.md"), "n\n");
    write(&f.wt.join("deep/new/x.rs"), "x\n");
    write(&f.wt.join("deep/new/y/z.rs"), "z\n");
    write(&f.wt.join("target/debug/app"), "bin\n");
    write(&f.wt.join("deep/a/b/target/out"), "built\n");
    assert_eq!(settled_in(&f.wt), set(&["deep/c", "src"]));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(
        (got.untracked, got.ignored, got.modified),
        (3, 2, 0),
        "{got:?}"
    );
    let status = git(&f.wt, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status.lines().filter(|l| l.starts_with("??")).count(), 3);
}

#[test]
fn a_name_in_another_unicode_form_is_untracked_whatever_the_job_configured() {
    // git on Linux never precomposes a name it lists; with the job's `core.precomposeUnicode`
    // followed, the decomposed name of new work would be taken for the tracked composed one.
    let f = tree();
    write(&f.wt.join("deep/c/caf\u{e9}.rs"), "tracked\n");
    git(&f.wt, &["add", "deep"]);
    git(&f.wt, &["commit", "-q", "-m", "composed"]);
    git(&f.wt, &["config", "core.precomposeUnicode", "true"]);
    write(&f.wt.join("deep/c/cafe\u{301}.rs"), "new work\n");
    assert_eq!(settled_in(&f.wt), set(&["deep/a", "deep/a/b", "src"]));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.untracked, got.modified), (1, 0), "{got:?}");
}
