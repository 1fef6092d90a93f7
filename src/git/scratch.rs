//! Unit tests' git: a hermetic `git -C DIR ARGS...` (no user or system configuration, a fixed
//! author), for the scratch repositories the tests of the git and worktree layers make.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

/// Runs git in `dir`; its output, whatever its status.
pub fn git_output<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Output {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap()
}

/// Runs git in `dir`, which must succeed; its standard output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_output(dir, args);
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A new repository `p` in a temporary directory, with one commit (file `a`) on `main`; the
/// directory, which removes it when dropped, and the repository's top.
pub fn repo_with_one_commit() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("p");
    std::fs::create_dir(&top).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    std::fs::write(top.join("a"), "a\n").unwrap();
    git(&top, &["add", "a"]);
    git(&top, &["commit", "-q", "-m", "one"]);
    (tmp, top)
}
