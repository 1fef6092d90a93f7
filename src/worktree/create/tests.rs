//! Creation against real repositories: an id taken in the project or under the worktree root
//! makes nothing and deletes nothing of what was there; a free one makes the branch, the pin and
//! the checkout.

use crate::git::scratch::git;
use std::process::Command;

use super::{create, pin_ref, Fill};
use crate::git::project::Project;
use crate::job::id::JobId;

/// A project with one commit, its base, a place for worktrees and a fresh id.
fn setup() -> (
    tempfile::TempDir,
    Project,
    String,
    std::path::PathBuf,
    JobId,
) {
    let (tmp, top) = crate::git::scratch::repo_with_one_commit();
    let base = git(&top, &["rev-parse", "HEAD"]);
    let project = Project::discover(&top).unwrap();
    let key_dir = tmp.path().join("worktrees");
    std::fs::create_dir(&key_dir).unwrap();
    (tmp, project, base, key_dir, JobId::generate(b"t"))
}

const FILL: Fill<'static> = Fill {
    include: &[],
    confined: None,
    progress: false,
    ignore: &[],
};

fn value(project: &Project, name: &str) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(&project.top)
        .args(["rev-parse", "--verify", "--quiet", name])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn a_branch_taken_in_the_project_makes_nothing_and_deletes_nothing() {
    let (_tmp, project, base, key_dir, id) = setup();
    let branch = format!("refs/heads/{}", id.branch());
    // At base: the value a wrong undo would delete.
    git(&project.top, &["update-ref", &branch, &base]);
    let path = key_dir.join(id.as_str());
    let made = create(&project, &id, &path, &base, FILL).unwrap();
    assert!(made.is_none(), "taken: another id is drawn");
    assert!(!path.exists(), "the directory made for it is gone again");
    assert_eq!(value(&project, &branch), Some(base), "the branch stays");
    assert_eq!(value(&project, &pin_ref(&id)), None, "no pin made");
}

#[test]
fn a_directory_taken_under_the_root_makes_nothing_and_keeps_what_is_there() {
    let (_tmp, project, base, key_dir, id) = setup();
    let path = key_dir.join(id.as_str());
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("mine"), "x").unwrap();
    let made = create(&project, &id, &path, &base, FILL).unwrap();
    assert!(made.is_none());
    assert_eq!(std::fs::read_to_string(path.join("mine")).unwrap(), "x");
    assert!(!path.join(".git").exists(), "nothing initialised in it");
    let branch = format!("refs/heads/{}", id.branch());
    assert_eq!(value(&project, &branch), None, "no branch made");
    assert_eq!(value(&project, &pin_ref(&id)), None, "no pin made");
}

#[test]
fn a_free_id_gets_its_branch_its_pin_and_its_checkout() {
    let (_tmp, project, base, key_dir, id) = setup();
    let path = key_dir.join(id.as_str());
    let made = create(&project, &id, &path, &base, FILL).unwrap().unwrap();
    assert!(!made.dispatch_dirty);
    assert_eq!(std::fs::read_to_string(path.join("a")).unwrap(), "a\n");
    let branch = format!("refs/heads/{}", id.branch());
    assert_eq!(value(&project, &branch), Some(base.clone()));
    assert_eq!(value(&project, &pin_ref(&id)), Some(base.clone()));
    assert_eq!(git(&path, &["rev-parse", "HEAD"]), base);
    // A dirty checkout is reported, whatever ran beside it.
    std::fs::write(project.top.join("a"), "changed\n").unwrap();
    let other = std::iter::repeat_with(|| JobId::generate(b"t"))
        .find(|other| other.as_str() != id.as_str())
        .unwrap();
    let path = key_dir.join(other.as_str());
    let made = create(&project, &other, &path, &base, FILL)
        .unwrap()
        .unwrap();
    assert!(made.dispatch_dirty);
}
