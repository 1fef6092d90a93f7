//! Repositories among the ignored files: their commits and their work are no ignored file's, and
//! removing the worktree would remove them.

use super::*;

/// A repository made in `dir` with one commit of its own.
fn repository_with_a_commit(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    write(&dir.join("notes.md"), "only here\n");
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "mine"]);
}

#[test]
fn an_ignored_repository_with_a_commit_of_its_own_is_work() {
    let f = fixture();
    repository_with_a_commit(&f.wt.join("target"));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.untracked, 0, "{got:?}");
    assert_eq!(
        got.nested,
        ["target: commits no remote of it has"],
        "{got:?}"
    );
}

#[test]
fn a_repository_deep_in_an_ignored_directory_is_looked_into() {
    let f = fixture();
    repository_with_a_commit(&f.wt.join("target/debug/build/dep"));
    write(&f.wt.join("target/debug/out.o"), "object\n");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(
        got.nested,
        ["target/debug/build/dep: commits no remote of it has"],
        "{got:?}"
    );
}

#[test]
fn uncommitted_work_in_an_ignored_repository_is_work() {
    let f = fixture();
    let dep = f.wt.join("target/dep");
    git(&f.wt, &["init", "-q", dep.to_str().unwrap()]);
    write(&dep.join("draft.md"), "not committed\n");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.nested, ["target/dep: 1 untracked"], "{got:?}");
}

#[test]
fn an_ignored_bare_repository_with_commits_is_work() {
    let f = fixture();
    let bare = f.wt.join("target/store.git");
    git(&f.wt, &["init", "-q", "--bare", bare.to_str().unwrap()]);
    let src = f.wt.join("target/src");
    repository_with_a_commit(&src);
    git(&src, &["push", "-q", bare.to_str().unwrap(), "main"]);
    std::fs::remove_dir_all(&src).unwrap();
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(
        got.nested,
        ["target/store.git: commits no remote of it has"],
        "{got:?}"
    );
}

/// A clone left as cloned holds nothing of its own; a commit made in it afterwards does.
#[test]
fn an_ignored_clone_holds_only_the_commits_made_in_it() {
    let f = fixture();
    let clone = f.wt.join("target/clone");
    let url = f.project.to_str().unwrap();
    git(&f.wt, &["clone", "-q", url, clone.to_str().unwrap()]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert!(got.nested.is_empty(), "{got:?}");
    assert_eq!(got.ignored, 1, "{got:?}");
    write(&clone.join("a.txt"), "changed in the clone\n");
    git(&clone, &["commit", "-q", "-am", "local"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(
        got.nested,
        ["target/clone: commits no remote of it has"],
        "{got:?}"
    );
}

/// The job's own linked worktree in an ignored directory is counted by its status, not refused
/// as a repository of its own.
#[test]
fn the_jobs_own_clean_linked_worktree_in_an_ignored_directory_holds_nothing() {
    let f = fixture();
    let side = f.wt.join("target/side");
    git(
        &f.wt,
        &["worktree", "add", "-q", "--detach", side.to_str().unwrap()],
    );
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert!(got.nested.is_empty(), "{got:?}");
    assert_eq!((got.modified, got.untracked), (0, 0), "{got:?}");
}

/// A nested repository's `info/exclude` is the job's: a rule in it could hide the user's later
/// files from the cleanup, so the inspection fails (the worktree is kept).
#[test]
fn a_rule_in_a_nested_repositorys_info_exclude_is_not_trusted() {
    let f = fixture();
    let sub = f.wt.join("vendor/lib");
    repository_with_a_commit(&sub);
    git(&sub, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    git(&f.wt, &["add", "vendor/lib"]);
    git(&f.wt, &["commit", "-q", "-m", "gitlink"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert!(got.nested.is_empty(), "{got:?}");
    write(
        &sub.join(".git/info/exclude"),
        "# comments are no rule\n*\n",
    );
    match inspect(&f.wt, BRANCH) {
        Err(InspectError::Untrusted { reason, .. }) => {
            assert!(reason.contains("info/exclude"), "{reason}")
        }
        other => panic!("expected the nested info/exclude refused, got {other:?}"),
    }
}
