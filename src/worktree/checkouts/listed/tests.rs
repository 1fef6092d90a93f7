//! The in-process listing against git's own, checkout by checkout: every layout it answers for
//! reads as `git worktree list --porcelain -z` says, and every one it leaves to git is `None`.

use crate::git::scratch::git;
use std::process::Command;

use super::super::{from_git, holding, Hold};
use super::{list, Listed};
use crate::git::project::Project;

fn project() -> (tempfile::TempDir, Project) {
    let (tmp, top) = crate::git::scratch::repo_with_one_commit();
    let project = Project::discover(&top).unwrap();
    (tmp, project)
}

/// `project()` with a linked checkout `side` beside it, on a new branch `isolate/x-1234`.
fn project_with_side_checkout() -> (tempfile::TempDir, Project, std::path::PathBuf) {
    let (tmp, project) = project();
    let side = tmp.path().join("side");
    let branch = ["worktree", "add", "-q", "-b", "isolate/x-1234"];
    git(
        &project.top,
        &[&branch[..], &[side.to_str().unwrap()]].concat(),
    );
    (tmp, project, side)
}

fn sorted(mut listed: Vec<Listed>) -> Vec<Listed> {
    listed.sort_by(|a, b| a.dir.cmp(&b.dir));
    listed
}

/// The in-process listing, which must answer, against git's.
fn same_as_git(project: &Project) {
    let ours = list(project).expect("answered in-process");
    let git_s = from_git(project).unwrap();
    assert_eq!(sorted(ours), sorted(git_s));
}

#[test]
fn checkouts_read_as_git_lists_them() {
    let (tmp, project) = project();
    same_as_git(&project);
    let wt = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    git(
        &project.top,
        &["worktree", "add", "-q", "-b", "side", &wt("side")],
    );
    git(
        &project.top,
        &["worktree", "add", "-q", "--detach", &wt("detached")],
    );
    git(
        &project.top,
        &["worktree", "add", "-q", "-b", "gone", &wt("gone")],
    );
    std::fs::remove_dir_all(wt("gone")).unwrap();
    git(
        &project.top,
        &[
            "worktree",
            "add",
            "-q",
            "--orphan",
            "-b",
            "new",
            &wt("unborn"),
        ],
    );
    same_as_git(&project);
    // Packed, a branch reads the same; the main checkout detached too.
    git(&project.top, &["pack-refs", "--all"]);
    git(&project.top, &["checkout", "-q", "--detach"]);
    same_as_git(&project);
    // An entry git skips: no `gitdir` file, or an empty one.
    let admin = project.git_dir.join("worktrees");
    std::fs::create_dir(admin.join("stray")).unwrap();
    std::fs::create_dir(admin.join("empty")).unwrap();
    std::fs::write(admin.join("empty/gitdir"), "").unwrap();
    same_as_git(&project);
}

#[test]
fn a_branch_checked_out_in_a_linked_checkout_is_held_there() {
    let (_tmp, project, side) = project_with_side_checkout();
    let held = holding(&project, "refs/heads/isolate/x-1234")
        .unwrap()
        .unwrap();
    assert_eq!(held.hold, Hold::CheckedOut);
    assert_eq!(held.dir, std::fs::canonicalize(&side).unwrap());
    assert!(holding(&project, "refs/heads/other").unwrap().is_none());
    let main = holding(&project, "refs/heads/main").unwrap().unwrap();
    assert_eq!(main.dir, std::fs::canonicalize(&project.top).unwrap());
}

#[test]
fn what_git_reads_otherwise_is_left_to_git() {
    let (tmp, project) = project();
    let side = tmp.path().join("side");
    git(
        &project.top,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            side.to_str().unwrap(),
        ],
    );
    assert!(list(&project).is_some());
    let admin = project.git_dir.join("worktrees/side");
    // HEAD on a branch that is itself symbolic: git lists the end of the chain.
    git(
        &project.top,
        &["symbolic-ref", "refs/heads/link", "refs/heads/side"],
    );
    std::fs::write(admin.join("HEAD"), "ref: refs/heads/link\n").unwrap();
    assert_eq!(list(&project), None);
    std::fs::write(admin.join("HEAD"), "ref: refs/heads/side\n").unwrap();
    assert!(list(&project).is_some());
    // A HEAD that is a link, or not a ref nor an id.
    std::fs::remove_file(admin.join("HEAD")).unwrap();
    std::os::unix::fs::symlink("../../HEAD", admin.join("HEAD")).unwrap();
    assert_eq!(list(&project), None);
    std::fs::remove_file(admin.join("HEAD")).unwrap();
    std::fs::write(admin.join("HEAD"), "garbage\n").unwrap();
    assert_eq!(list(&project), None);
    std::fs::write(admin.join("HEAD"), "ref: refs/heads/side\n").unwrap();
    // A relative `gitdir` (newer git reads it relative to the entry), and a FIFO.
    std::fs::write(admin.join("gitdir"), "../side/.git\n").unwrap();
    assert_eq!(list(&project), None);
    std::fs::remove_file(admin.join("gitdir")).unwrap();
    nix::unistd::mkfifo(&admin.join("gitdir"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    assert_eq!(list(&project), None);
    std::fs::remove_file(admin.join("gitdir")).unwrap();
    // Refs in a reftable.
    std::fs::create_dir(project.git_dir.join("reftable")).unwrap();
    assert_eq!(list(&project), None);
}

#[test]
fn a_branch_checked_out_where_the_path_is_not_utf8_is_held_there() {
    use std::os::unix::ffi::OsStrExt;
    let (tmp, project) = project();
    // A name in Latin-1 (`café`): a path, but no UTF-8 text. Listed by git, not in-process.
    let side = tmp.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    let out = Command::new("git")
        .arg("-C")
        .arg(&project.top)
        .args(["worktree", "add", "-q", "-b", "isolate/x-1234"])
        .arg(&side)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let held = holding(&project, "refs/heads/isolate/x-1234").unwrap();
    let held = held.expect("checked out there: never deleted behind it");
    assert_eq!(held.hold, Hold::CheckedOut);
    assert_eq!(held.dir, std::fs::canonicalize(&side).unwrap());
}

#[test]
fn a_branch_rebased_where_the_path_is_not_utf8_is_held_there() {
    use std::os::unix::ffi::OsStrExt;
    let (tmp, project) = project();
    let side = tmp.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    let run = crate::git::scratch::git_output::<&std::ffi::OsStr>;
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let add = run(
        &project.top,
        &[
            os("worktree"),
            os("add"),
            os("-q"),
            os("-b"),
            os("isolate/x-1234"),
            side.as_os_str(),
        ],
    );
    assert!(add.status.success(), "{add:?}");
    // The same line changed on both sides: the rebase stops, the branch is its to come back to.
    std::fs::write(side.join("a"), "side\n").unwrap();
    git(&side, &["commit", "-q", "-am", "side"]);
    std::fs::write(project.top.join("a"), "main\n").unwrap();
    git(&project.top, &["commit", "-q", "-am", "main"]);
    assert!(!run(&side, &[os("rebase"), os("-q"), os("main")])
        .status
        .success());
    let held = holding(&project, "refs/heads/isolate/x-1234").unwrap();
    let held = held.expect("being rebased there: never deleted behind it");
    assert_eq!(held.hold, Hold::Rebasing);
}

#[test]
fn a_branch_checked_out_where_a_locked_checkout_is_not_mounted_is_held_there() {
    let (tmp, project, side) = project_with_side_checkout();
    let side_s = side.to_str().unwrap();
    // Locked: on a device that is not always mounted (git-worktree(1), "lock"); now it is not.
    git(&project.top, &["worktree", "lock", side_s]);
    std::fs::rename(&side, tmp.path().join("unmounted")).unwrap();
    same_as_git(&project);
    let held = holding(&project, "refs/heads/isolate/x-1234").unwrap();
    let held = held.expect("locked there: git keeps it checked out, never deleted behind it");
    assert_eq!(held.hold, Hold::CheckedOut);
    assert_eq!(held.dir, side);
    // Not locked, its directory gone: prunable, it holds nothing.
    git(&project.top, &["worktree", "unlock", side_s]);
    same_as_git(&project);
    assert_eq!(
        holding(&project, "refs/heads/isolate/x-1234").unwrap(),
        None
    );
}

#[test]
fn a_branch_rebased_in_a_checkout_whose_git_dir_is_elsewhere_is_held_there() {
    // `git init --separate-git-dir` (a submodule's checkout is the same): git lists the main
    // checkout as its git directory, which has no `.git` of its own.
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("p");
    let sep = tmp.path().join("p.git");
    std::fs::create_dir(&top).unwrap();
    git(
        &top,
        &[
            "init",
            "-q",
            "-b",
            "main",
            "--separate-git-dir",
            sep.to_str().unwrap(),
        ],
    );
    std::fs::write(top.join("a"), "a\n").unwrap();
    git(&top, &["add", "a"]);
    git(&top, &["commit", "-q", "-m", "one"]);
    git(&top, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(top.join("a"), "topic\n").unwrap();
    git(&top, &["commit", "-q", "-am", "topic"]);
    git(&top, &["checkout", "-q", "main"]);
    std::fs::write(top.join("a"), "main\n").unwrap();
    git(&top, &["commit", "-q", "-am", "main"]);
    let project = Project::discover(&top).unwrap();
    same_as_git(&project);
    let rebase = Command::new("git")
        .arg("-C")
        .arg(&top)
        .args(["rebase", "-q", "topic"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(!rebase.status.success(), "the rebase stops: {rebase:?}");
    let held = holding(&project, "refs/heads/main").unwrap();
    let held = held.expect("being rebased: never moved behind the rebase");
    assert_eq!(held.hold, Hold::Rebasing);
}

#[test]
fn a_bare_repository_checks_out_nothing_its_linked_checkouts_do() {
    // The bare clone with its checkouts beside it, in `.git` (so that its top reads as a
    // checkout's) and under a name of its own.
    for name in [".git", "repo.git"] {
        let (tmp, origin) = project();
        let bare = tmp.path().join("b").join(name);
        let out = Command::new("git")
            .args(["clone", "-q", "--bare"])
            .arg(&origin.top)
            .arg(&bare)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let main = tmp.path().join("b/main");
        git(
            &bare,
            &["worktree", "add", "-q", main.to_str().unwrap(), "main"],
        );
        let project = Project::discover(&main).unwrap();
        // `core.bare = true`: git's to list (as `bare`, with no branch).
        assert_eq!(list(&project), None, "{name}");
        let held = holding(&project, "refs/heads/main").unwrap().unwrap();
        assert_eq!((held.dir, held.hold), (main, Hold::CheckedOut), "{name}");
    }
    // A config that could say so from elsewhere: git's too.
    let (_tmp, project) = project();
    assert!(list(&project).is_some());
    git(&project.top, &["config", "include.path", "more"]);
    assert_eq!(list(&project), None);
}
