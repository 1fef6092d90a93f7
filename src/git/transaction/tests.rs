//! The started transaction against a real repository: committed it deletes what it checks at the
//! commit, started it locks nothing, and anything short of a commit changes nothing.

use crate::git::scratch::{git as ok, git_output as git, repo_with_one_commit};
use std::path::Path;

use super::start;

/// A repository with one commit and two refs at it: a branch and a pin.
fn repo() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let (tmp, top) = repo_with_one_commit();
    let base = ok(&top, &["rev-parse", "HEAD"]);
    ok(&top, &["update-ref", "refs/heads/isolate/x-1234", &base]);
    ok(&top, &["update-ref", "refs/isolate/x-1234/base", &base]);
    (tmp, top, base)
}

fn exists(top: &Path, name: &str) -> bool {
    git(top, &["rev-parse", "--verify", "--quiet", name])
        .status
        .success()
}

fn deletes(base: &str, branch_old: &str) -> String {
    format!(
        "delete refs/isolate/x-1234/base {base}\ndelete refs/heads/isolate/x-1234 {branch_old}\n"
    )
}

#[test]
fn a_committed_transaction_deletes_what_it_checks_at_the_commit() {
    let (_tmp, top, base) = repo();
    let started = start(&top, &deletes(&base, &base)).unwrap();
    // Started, nothing is locked: the user's git works on meanwhile.
    assert!(git(&top, &["update-ref", "refs/heads/other", &base])
        .status
        .success());
    assert!(exists(&top, "refs/heads/isolate/x-1234"));
    assert!(started.commit());
    assert!(!exists(&top, "refs/heads/isolate/x-1234"));
    assert!(!exists(&top, "refs/isolate/x-1234/base"));
}

#[test]
fn a_value_that_moved_before_the_commit_or_no_commit_changes_nothing() {
    let (_tmp, top, base) = repo();
    let other = "1".repeat(40);
    assert!(!start(&top, &deletes(&base, &other)).unwrap().commit());
    assert!(exists(&top, "refs/heads/isolate/x-1234"));
    assert!(exists(&top, "refs/isolate/x-1234/base"));
    // Moved after the start, before the commit: checked at the commit, so nothing is deleted.
    let started = start(&top, &deletes(&base, &base)).unwrap();
    ok(&top, &["commit", "-q", "--allow-empty", "-m", "two"]);
    ok(&top, &["update-ref", "refs/heads/isolate/x-1234", "HEAD"]);
    assert!(!started.commit());
    assert!(exists(&top, "refs/heads/isolate/x-1234"));
    assert!(exists(&top, "refs/isolate/x-1234/base"));
    ok(&top, &["update-ref", "refs/heads/isolate/x-1234", &base]);
    // Started, then dropped (the removal it waited for failed): aborted, no lock left.
    drop(start(&top, &deletes(&base, &base)).unwrap());
    assert!(exists(&top, "refs/heads/isolate/x-1234"));
    assert!(exists(&top, "refs/isolate/x-1234/base"));
    assert!(!top.join(".git/refs/heads/isolate/x-1234.lock").exists());
    // Packed refs too.
    ok(&top, &["pack-refs", "--all"]);
    assert!(start(&top, &deletes(&base, &base)).unwrap().commit());
    assert!(!exists(&top, "refs/heads/isolate/x-1234"));
    assert!(!exists(&top, "refs/isolate/x-1234/base"));
}
