//! The removal against real trees: deep ones, links, and a tree swapped for links while it goes.

use super::*;
use std::fs;

#[test]
fn removes_a_deep_tree_and_never_follows_symlinks() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("keep"), "keep").unwrap();
    let tree = root.path().join("wt");
    for d in 0..5 {
        let dir = tree.join(format!("only/d{d}/sub"));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..50 {
            fs::write(dir.join(format!("f{f}")), "x").unwrap();
        }
    }
    std::os::unix::fs::symlink(outside.path(), tree.join("only/link")).unwrap();
    std::os::unix::fs::symlink(outside.path(), tree.join("link-top")).unwrap();
    remove_tree(&tree).unwrap();
    assert!(!tree.exists());
    assert_eq!(
        fs::read_to_string(outside.path().join("keep")).unwrap(),
        "keep"
    );
}

#[test]
fn a_tree_swapped_for_symlinks_while_it_is_removed_never_reaches_outside() {
    // A thread swaps directories of the tree for symlinks to a victim of the same shape while the
    // removal runs: a removal that re-resolves a listed path deletes the victim's files.
    for round in 0..3 {
        let root = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        let tree = root.path().join("wt");
        for d in 0..16 {
            for s in 0..4 {
                let dir = tree.join(format!("d{d}/s{s}"));
                fs::create_dir_all(&dir).unwrap();
                fs::create_dir_all(victim.path().join(format!("d{d}/s{s}"))).unwrap();
                fs::write(victim.path().join(format!("d{d}/s{s}/important")), "keep").unwrap();
                for f in 0..10 {
                    fs::write(dir.join(format!("f{f}")), "x").unwrap();
                }
            }
        }
        let stop = std::sync::atomic::AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for d in 0..16 {
                        let dir = tree.join(format!("d{d}"));
                        let _ = fs::rename(&dir, root.path().join(format!("gone{d}")));
                        let _ =
                            std::os::unix::fs::symlink(victim.path().join(format!("d{d}")), &dir);
                    }
                }
            });
            let _ = remove_tree(&tree);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        for d in 0..16 {
            for s in 0..4 {
                assert!(
                    victim.path().join(format!("d{d}/s{s}/important")).exists(),
                    "round {round}: the removal followed a swapped symlink"
                );
            }
        }
    }
}

/// A chain of directories deeper than this process may hold descriptors (a job makes one in its
/// TMPDIR by renames, faster than by paths) goes whole: what lies too deep is moved up first.
#[test]
fn a_chain_deeper_than_the_descriptors_a_process_may_hold_goes_whole() {
    let root = tempfile::tempdir().unwrap();
    let tree = root.path().join("tmp");
    fs::create_dir(&tree).unwrap();
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct given.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    assert_eq!(got, 0);
    let depth = limit.rlim_cur.min(200_000) as usize + 100;
    let mut dir = open_dir(&nix::fcntl::AT_FDCWD, tree.as_os_str()).unwrap();
    for _ in 0..depth {
        nix::sys::stat::mkdirat(&dir, "d", nix::sys::stat::Mode::S_IRWXU).unwrap();
        let next = open_dir(&dir, std::ffi::OsStr::new("d")).unwrap();
        dir = next;
    }
    fs::write(format!("/proc/self/fd/{}/last", dir.as_raw_fd()), "x").unwrap();
    drop(dir);
    remove_tree(&tree).unwrap();
    assert!(!tree.exists());
}

/// A name the tree already holds at its top (a job's decoy `.isolate-deep-0`) is passed over by a
/// move up, never replaced, and the move does not fail.
#[test]
fn a_move_up_passes_over_a_name_the_tree_holds() {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join(".isolate-deep-0/kept")).unwrap();
    fs::create_dir_all(root.path().join("a/deep")).unwrap();
    let top = Arc::new(open_dir(&nix::fcntl::AT_FDCWD, root.path().as_os_str()).unwrap());
    let deep = entry::Deep::new(Arc::clone(&top));
    let moving = Entry {
        parent: Arc::new(open_dir(&*top, std::ffi::OsStr::new("a")).unwrap()),
        name: "deep".into(),
        is_dir: true,
    };
    deep.move_up(&moving).unwrap();
    assert!(root.path().join(".isolate-deep-0/kept").is_dir());
    assert!(root.path().join(".isolate-deep-1").is_dir());
    assert_eq!(deep.moved.lock().unwrap().len(), 1);
}
