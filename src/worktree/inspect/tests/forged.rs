//! Stat data the job forged in its index (forged.rs): an edit it hides from git's status is
//! still found, when the file changed after the checkout ended.

use super::*;
use crate::worktree::checked_out;

/// The fixture's `a.txt` edited to content of the same size after its checkout ended at the
/// returned time, the index then rewritten to record the file's present stat data
/// (tests/data/forge-stat.py); git's own status sees nothing.
fn forged_edit() -> (Fixture, CheckedOut) {
    let f = fixture();
    // The index is newer than every file, so that no entry is racily clean.
    std::thread::sleep(std::time::Duration::from_millis(20));
    git(&f.wt, &["update-index", "--really-refresh"]);
    let checked_out = checked_out::now();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&f.wt.join("a.txt"), "ALPHA\n");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/forge-stat.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(".git/index")
        .current_dir(&f.wt)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(git(&f.wt, &["status", "--porcelain"]), "", "git is fooled");
    (f, checked_out)
}

#[test]
fn an_edit_the_index_hides_is_found_when_the_file_changed_after_the_checkout() {
    let (f, checked_out) = forged_edit();
    let at = |checked_out| {
        super::super::inspect(&f.wt, BRANCH, &ProjectExcludes::default(), checked_out).unwrap()
    };
    assert_eq!(at(checked_out).modified, 1, "changed after the checkout");
    assert_eq!(
        at(CheckedOut::Unknown).modified,
        1,
        "no note: every file read"
    );
    // The control: a checkout said to have ended after the edit trusts the forged entry, as git.
    assert_eq!(
        at(checked_out::now()).modified,
        0,
        "the forgery fools a trusting status"
    );
}

#[test]
fn a_configuration_that_trusts_no_change_time_is_not_followed() {
    let f = fixture();
    std::thread::sleep(std::time::Duration::from_millis(20));
    git(&f.wt, &["update-index", "--really-refresh"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let checked_out = checked_out::now();
    git(&f.wt, &["config", "core.trustCTime", "false"]);
    git(&f.wt, &["config", "core.checkStat", "minimal"]);
    let file = f.wt.join("a.txt");
    let before = std::fs::metadata(&file).unwrap().modified().unwrap();
    write(&file, "ALPHA\n");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(before)
        .unwrap();
    // Dated ahead, so that no entry is racily clean to a git that compares whole seconds.
    let ahead = std::time::SystemTime::now() + std::time::Duration::from_secs(2);
    let index = std::fs::File::options()
        .write(true)
        .open(f.wt.join(".git/index"));
    index.unwrap().set_modified(ahead).unwrap();
    assert_eq!(git(&f.wt, &["status", "--porcelain"]), "", "git is fooled");
    let insp =
        super::super::inspect(&f.wt, BRANCH, &ProjectExcludes::default(), checked_out).unwrap();
    assert_eq!(insp.modified, 1);
}

/// An executable bit and a link changed under a configuration that claims the file system keeps
/// neither: still changes, as Linux keeps both.
#[test]
fn a_configuration_that_denies_modes_and_links_is_not_followed() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    std::os::unix::fs::symlink("a.txt", f.wt.join("link")).unwrap();
    git(&f.wt, &["add", "link"]);
    git(&f.wt, &["commit", "-qm", "link"]);
    let checked_out = checked_out::now();
    let file = f.wt.join("b.txt");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    git(&f.wt, &["config", "core.fileMode", "false"]);
    let insp = |checked_out| {
        super::super::inspect(&f.wt, BRANCH, &ProjectExcludes::default(), checked_out).unwrap()
    };
    assert_eq!(git(&f.wt, &["status", "--porcelain"]), "", "git is fooled");
    assert_eq!(insp(checked_out).modified, 1, "the executable bit");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_file(f.wt.join("link")).unwrap();
    write(&f.wt.join("link"), "a.txt");
    git(&f.wt, &["config", "core.symlinks", "false"]);
    assert_eq!(insp(checked_out).modified, 1, "a link made a file");
}
