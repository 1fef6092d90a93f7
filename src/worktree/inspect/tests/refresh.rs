//! The in-memory stat refresh before the status: what it marks up to date, what it leaves for the
//! status to judge, and that the status still finds what only hashing can find.

use std::os::unix::fs::MetadataExt;

use super::*;
use crate::worktree::inspect::open::open_untrusted;
use crate::worktree::inspect::refresh::{refreshed, Judge};

/// The job repository of `f` opened as the inspection opens it, and its index.
fn opened(f: &Fixture) -> (gix::Repository, gix::index::File) {
    let repo = open_untrusted(&f.wt, &f.wt.join(".git")).unwrap();
    let index = repo.open_index().unwrap();
    (repo, index)
}

fn judge(repo: &gix::Repository) -> Judge {
    Judge {
        stat: repo.stat_options().unwrap(),
        fs: repo.filesystem_options().unwrap(),
    }
}

/// The paths of `state` marked up to date.
fn marked(state: &gix::index::State) -> Vec<String> {
    state
        .entries()
        .iter()
        .filter(|e| e.flags.contains(gix::index::entry::Flags::UPTODATE))
        .map(|e| e.path(state).to_string())
        .collect()
}

/// `touch -m -d @SECS.NSECS path`: the modification time set to the nanosecond.
fn set_mtime(path: &Path, secs: i64, nsecs: i64) {
    let stamp = format!("@{secs}.{nsecs:09}");
    let out = Command::new("touch")
        .args(["-m", "-d", &stamp])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// The index's time a second after the checkout's files (checked out and indexed in the same
/// clock tick, every entry is racily clean).
fn settle(f: &Fixture) {
    let file = std::fs::metadata(f.wt.join("a.txt")).unwrap();
    set_mtime(&f.wt.join(".git/index"), file.mtime() + 1, 0);
}

#[test]
fn a_clean_checkout_is_marked_up_to_date_in_memory_only() {
    let f = fixture();
    settle(&f);
    let on_disk = std::fs::read(f.wt.join(".git/index")).unwrap();
    let (repo, index) = opened(&f);
    let copy = refreshed(&f.wt, &index, judge(&repo)).expect("entries to mark");
    assert_eq!(
        marked(&copy),
        [".gitignore", "a.txt", "b.txt", "src/lib.rs"]
    );
    assert!(
        marked(&index).is_empty(),
        "the index read is left as it was"
    );
    assert_eq!(std::fs::read(f.wt.join(".git/index")).unwrap(), on_disk);
}

#[test]
fn entries_beneath_a_linked_directory_are_left_to_the_status() {
    let f = fixture();
    // The same file, reached through a link: the stat data of src/lib.rs's new inode differs, but
    // the link itself must already stop the refresh (it never opens a directory through one).
    let elsewhere = f.wt.parent().unwrap().join("elsewhere");
    std::fs::rename(f.wt.join("src"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, f.wt.join("src")).unwrap();
    settle(&f);
    let (repo, index) = opened(&f);
    let copy = refreshed(&f.wt, &index, judge(&repo)).expect("entries to mark");
    assert_eq!(marked(&copy), [".gitignore", "a.txt", "b.txt"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked), (1, 1), "{got:?}");
}

#[test]
fn a_racily_clean_file_changed_in_place_is_still_found() {
    let f = fixture();
    // mtime and size put back: only ctime tells a change here, which the job's configuration
    // cannot make the comparison ignore (open.rs).
    git(&f.wt, &["config", "core.trustCTime", "false"]);
    let file = f.wt.join("a.txt");
    let before = std::fs::metadata(&file).unwrap();
    write(&file, "ALPHA\n");
    set_mtime(&file, before.mtime(), before.mtime_nsec());
    settle(&f);
    let index = f.wt.join(".git/index");
    let (repo, state) = opened(&f);
    let copy = refreshed(&f.wt, &state, judge(&repo)).expect("entries to mark");
    assert!(
        !marked(&copy).contains(&"a.txt".to_string()),
        "the index is newer than the file: not racy, but its change time differs"
    );
    // The index written in the very nanosecond of the file: racily clean, so it is hashed.
    set_mtime(&index, before.mtime(), before.mtime_nsec());
    let (repo, state) = opened(&f);
    let copy = refreshed(&f.wt, &state, judge(&repo));
    assert!(!copy.is_some_and(|c| marked(&c).contains(&"a.txt".to_string())));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked), (1, 0), "{got:?}");
}

#[test]
fn a_file_turned_executable_or_into_a_link_is_left_to_the_status() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let a = f.wt.join("a.txt");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(f.wt.join("b.txt")).unwrap();
    std::os::unix::fs::symlink("a.txt", f.wt.join("b.txt")).unwrap();
    settle(&f);
    let (repo, index) = opened(&f);
    let copy = refreshed(&f.wt, &index, judge(&repo)).expect("entries to mark");
    assert_eq!(marked(&copy), [".gitignore", "src/lib.rs"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.modified, 2, "{got:?}");
}
