//! The inspection against real repositories made with git: the counts, the refusals, and that
//! nothing planted runs and nothing is written.

pub(super) use super::status::count_status;
pub(super) use super::{missing_from, CheckedOut, InspectError, Inspection, ProjectExcludes};

/// The inspection of a job repository made from a project whose `info/exclude` has no rule, as if
/// its checkout had ended now: the stat data of every file the test made is trusted (forged.rs).
fn inspect(worktree: &Path, branch: &str) -> Result<Inspection, InspectError> {
    let now = crate::worktree::checked_out::now();
    super::inspect(worktree, branch, &ProjectExcludes::default(), now)
}
pub(super) use std::path::{Path, PathBuf};
use std::process::Command;

mod counts;
mod forged;
mod ignored;
mod refresh;
mod safety;
mod settled;
mod written_tree;

const BRANCH: &str = "isolate/x-1234";

/// Run `git` in `dir` isolated from the developer's configuration; return its trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir, args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn git_cmd(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args);
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_CEILING_DIRECTORIES",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z");
    cmd
}

fn write(path: &Path, content: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

struct Fixture {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    wt: PathBuf,
    base: String,
}

/// A project with three commits (and `target/` ignored), and a job repository cut from it
/// the way isolate does: a shared clone through `objects/info/alternates`.
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    git(&project, &["init", "-q", "-b", "main"]);
    write(&project.join("a.txt"), "alpha\n");
    write(&project.join(".gitignore"), "target/\n");
    git(&project, &["add", "."]);
    git(&project, &["commit", "-q", "-m", "one"]);
    write(&project.join("src/lib.rs"), "pub fn f() {}\n");
    git(&project, &["add", "."]);
    git(&project, &["commit", "-q", "-m", "two"]);
    write(&project.join("b.txt"), "bravo\n");
    git(&project, &["add", "."]);
    git(&project, &["commit", "-q", "-m", "three"]);
    let base = git(&project, &["rev-parse", "HEAD"]);

    let wt = tmp.path().join("wt");
    git(
        tmp.path(),
        &["init", "-q", "--template=", wt.to_str().unwrap()],
    );
    let objects = project.join(".git/objects");
    write(
        &wt.join(".git/objects/info/alternates"),
        &format!("{}\n", objects.to_str().unwrap()),
    );
    let branch_ref = format!("refs/heads/{BRANCH}");
    git(&wt, &["update-ref", &branch_ref, &base]);
    git(&wt, &["symbolic-ref", "HEAD", &branch_ref]);
    git(&wt, &["reset", "-q", "--hard"]);
    Fixture {
        _tmp: tmp,
        project,
        wt,
        base,
    }
}
