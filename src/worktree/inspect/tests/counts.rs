//! What the inspection counts and lists.

use super::*;

#[test]
fn clean_job_reports_nothing() {
    let f = fixture();
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(
        got,
        Inspection {
            head_branch: Some(BRANCH.into()),
            head_commit: Some(f.base.clone()),
            branch_tip: Some(f.base.clone()),
            ..Inspection::default()
        }
    );
    assert!(
        missing_from(&f.project.join(".git"), std::slice::from_ref(&f.base))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn modified_and_deleted_files_count() {
    let f = fixture();
    write(&f.wt.join("a.txt"), "alpha changed\n");
    std::fs::remove_file(f.wt.join("b.txt")).unwrap();
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked, got.conflicted), (2, 0, 0));
}

#[test]
fn staged_and_modified_file_counts_once() {
    let f = fixture();
    write(&f.wt.join("a.txt"), "alpha staged\n");
    git(&f.wt, &["add", "a.txt"]);
    write(&f.wt.join("a.txt"), "alpha staged then modified\n");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.modified, 1);
}

#[test]
fn staged_new_file_counts_as_modified() {
    let f = fixture();
    write(&f.wt.join("new.txt"), "new\n");
    git(&f.wt, &["add", "new.txt"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked), (1, 0));
}

#[test]
fn untracked_files_count_one_by_one() {
    let f = fixture();
    write(&f.wt.join("notes.md"), "notes\n");
    write(&f.wt.join("newdir/one.rs"), "1\n");
    write(&f.wt.join("newdir/deeper/two.rs"), "2\n");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked, got.ignored), (0, 3, 0));
}

#[test]
fn ignored_files_are_not_untracked() {
    let f = fixture();
    write(&f.wt.join("target/debug/app"), "binary\n");
    write(&f.wt.join("target/debug/app.d"), "deps\n");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked), (0, 0));
    assert!(got.ignored > 0, "{got:?}");
}

#[test]
fn merge_conflict_is_reported() {
    let f = fixture();
    git(&f.wt, &["checkout", "-q", "-b", "other"]);
    write(&f.wt.join("a.txt"), "alpha from other\n");
    git(&f.wt, &["commit", "-q", "-am", "other"]);
    git(&f.wt, &["checkout", "-q", BRANCH]);
    write(&f.wt.join("a.txt"), "alpha from job\n");
    git(&f.wt, &["commit", "-q", "-am", "job"]);
    let merge = git_cmd(&f.wt, &["merge", "-q", "other"]).output().unwrap();
    assert!(!merge.status.success(), "the merge must conflict");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.conflicted, 1, "{got:?}");
    assert_eq!(got.modified, 0, "{got:?}");
    assert!(got.in_progress.contains(&"merge"), "{got:?}");
}

#[test]
fn stash_entries_are_counted() {
    let f = fixture();
    write(&f.wt.join("a.txt"), "alpha stashed\n");
    git(&f.wt, &["stash", "-q"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.stash_entries, got.modified), (1, 0));
    write(&f.wt.join("b.txt"), "bravo stashed\n");
    git(&f.wt, &["stash", "-q"]);
    assert_eq!(inspect(&f.wt, BRANCH).unwrap().stash_entries, 2);
}

#[test]
fn other_branches_and_tags_are_listed_and_new_commits_missing_from_project() {
    let f = fixture();
    git(&f.wt, &["checkout", "-q", "-b", "side"]);
    write(&f.wt.join("side.txt"), "side\n");
    git(&f.wt, &["add", "side.txt"]);
    git(&f.wt, &["commit", "-q", "-m", "side work"]);
    let side = git(&f.wt, &["rev-parse", "HEAD"]);
    git(&f.wt, &["tag", "-a", "-m", "annotated", "v1", &side]);
    git(&f.wt, &["checkout", "-q", BRANCH]);

    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.head_branch.as_deref(), Some(BRANCH));
    assert_eq!(got.branch_tip.as_deref(), Some(f.base.as_str()));
    assert_eq!(
        got.other_refs,
        vec![
            ("refs/heads/side".to_owned(), side.clone()),
            ("refs/tags/v1".to_owned(), side.clone()),
        ],
        "tags are peeled to their commit"
    );
    let missing = missing_from(&f.project.join(".git"), &[f.base.clone(), side.clone()]).unwrap();
    assert_eq!(missing, vec![side]);
}

#[test]
fn detached_head_has_no_branch() {
    let f = fixture();
    git(&f.wt, &["checkout", "-q", "--detach", "HEAD~1"]);
    let parent = git(&f.wt, &["rev-parse", "HEAD"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.head_branch, None);
    assert_eq!(got.head_commit, Some(parent));
    assert_eq!(got.branch_tip, Some(f.base.clone()));
    assert_eq!((got.modified, got.untracked), (0, 0), "{got:?}");
}

#[test]
fn missing_branch_and_unborn_head() {
    let f = fixture();
    git(&f.wt, &["symbolic-ref", "HEAD", "refs/heads/never-born"]);
    let got = inspect(&f.wt, "isolate/other-0000").unwrap();
    assert_eq!(
        (got.head_branch, got.head_commit, got.branch_tip),
        (None, None, None)
    );
    assert_eq!(
        got.other_refs,
        vec![(format!("refs/heads/{BRANCH}"), f.base.clone())]
    );
    // Against an empty HEAD tree everything in the index is staged.
    assert_eq!(got.modified, 4, "a.txt, b.txt, .gitignore, src/lib.rs");
}

#[test]
fn invalid_ids_are_rejected() {
    let f = fixture();
    let err = missing_from(&f.project.join(".git"), &["nothex".to_owned()]).unwrap_err();
    assert!(matches!(err, InspectError::InvalidId { .. }), "{err}");
}

/// A repository past the size where the status and the refresh take threads counts exactly what a
/// small one does: the same changes, early and late in the index, each counted once.
#[test]
fn a_job_repository_too_large_for_one_thread_counts_as_a_small_one() {
    let tmp = tempfile::tempdir().unwrap();
    let wt = tmp.path().join("wt");
    std::fs::create_dir(&wt).unwrap();
    git(&wt, &["init", "-q", "-b", BRANCH]);
    write(&wt.join(".gitignore"), "target/\n");
    let file = |i: usize| wt.join(format!("d{}/f{i}.txt", i % 7));
    for i in 0..2_600 {
        write(&file(i), &format!("{i}\n"));
    }
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-q", "-m", "many"]);
    let first = git(&wt, &["rev-parse", "HEAD"]);
    let entries = git(&wt, &["ls-files"]).lines().count();
    assert!(
        entries > 2 * super::super::status::PARALLEL_FROM,
        "{entries}"
    );
    // A status right after the commit would see every file racily clean: refreshed, none is.
    git(&wt, &["update-index", "--refresh"]);
    write(&file(0), "first changed\n");
    write(&file(2_599), "last changed\n");
    std::fs::remove_file(file(1_300)).unwrap();
    write(&wt.join("d1/new.txt"), "new\n");
    git(&wt, &["add", "d1/new.txt"]);
    write(&wt.join("zz/untracked.txt"), "u\n");
    write(&wt.join("untracked.txt"), "u\n");
    write(&wt.join("target/out.o"), "o\n");
    let got = inspect(&wt, BRANCH).unwrap();
    assert_eq!(got.head_commit, Some(first));
    assert_eq!(
        (got.modified, got.untracked, got.ignored, got.conflicted),
        (4, 2, 1, 0),
        "{got:?}"
    );
}

/// A file the index marks `--skip-worktree` or `--assume-unchanged`, edited afterwards (by the
/// user through `--resume`, after the job set the flag), is work: `git status` hides it, removing
/// the worktree would lose it. A skip-worktree file that is absent (a sparse checkout) is not.
#[test]
fn edits_the_index_flags_hide_from_git_status_are_counted() {
    for flag in ["--skip-worktree", "--assume-unchanged"] {
        let f = fixture();
        git(&f.wt, &["update-index", flag, "a.txt"]);
        write(&f.wt.join("a.txt"), "alpha edited after the flag\n");
        assert_eq!(git(&f.wt, &["status", "--porcelain"]), "", "{flag}");
        let got = inspect(&f.wt, BRANCH).unwrap();
        assert_eq!((got.modified, got.untracked), (1, 0), "{flag}: {got:?}");
    }
    let f = fixture();
    git(&f.wt, &["update-index", "--skip-worktree", "b.txt"]);
    std::fs::remove_file(f.wt.join("b.txt")).unwrap();
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked), (0, 0), "sparse: {got:?}");
}

/// Files under a directory the index names as a gitlink, with no repository there, are work:
/// neither git's status nor the walk looks inside, and removing the worktree removes them.
#[test]
fn files_beneath_a_gitlink_with_no_repository_are_counted() {
    let f = fixture();
    let sub = f.wt.join("vendor/lib");
    write(&sub.join("notes.md"), "kept by nothing\n");
    let commit = format!("160000,{},vendor/lib", f.base);
    git(&f.wt, &["update-index", "--add", "--cacheinfo", &commit]);
    git(&f.wt, &["commit", "-q", "-m", "gitlink"]);
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.nested.len(), 1, "{got:?}");
    assert!(got.nested[0].starts_with("vendor/lib: "), "{got:?}");
    assert!(
        got.nested[0].ends_with("1 file no repository holds"),
        "{got:?}"
    );
    // A `.git` there naming a repository outside the worktree holds none of them either.
    let elsewhere = f.project.join(".git");
    write(
        &sub.join(".git"),
        &format!("gitdir: {}\n", elsewhere.display()),
    );
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert!(
        got.nested[0].ends_with("2 files no repository holds"),
        "{got:?}"
    );
    // An empty directory (a submodule not checked out) holds nothing.
    std::fs::remove_file(sub.join("notes.md")).unwrap();
    std::fs::remove_file(sub.join(".git")).unwrap();
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert!(got.nested.is_empty(), "{got:?}");
}

/// The job's own configuration does not choose what counts as ignored: an excludes file it names
/// (anywhere, a FIFO included) is never read, and untracked files stay untracked.
#[test]
fn an_excludes_file_the_job_names_hides_nothing_and_is_never_read() {
    let f = fixture();
    let excludes = f.wt.join("../everything");
    write(&excludes, "*\n");
    git(
        &f.wt,
        &["config", "core.excludesFile", excludes.to_str().unwrap()],
    );
    write(&f.wt.join("notes.md"), "notes\n");
    assert_eq!(git(&f.wt, &["status", "--porcelain"]), "");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.untracked, got.ignored), (1, 0), "{got:?}");
    let fifo = f.wt.join("../fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    for key in ["core.excludesFile", "core.attributesFile"] {
        git(&f.wt, &["config", key, fifo.to_str().unwrap()]);
    }
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.untracked, got.ignored), (1, 0), "{got:?}");
}

/// A sparse checkout, with and without a sparse index (directory entries standing for trees outside
/// the cone): what a user puts outside the cone is counted, or the status fails and the worktree is
/// kept; what the sparse checkout left out is not work.
#[test]
fn a_sparse_checkout_hides_nothing() {
    for sparse_index in [false, true] {
        let f = fixture();
        write(&f.wt.join("docs/guide.md"), "guide\n");
        git(&f.wt, &["add", "docs/guide.md"]);
        git(&f.wt, &["commit", "-q", "-m", "docs"]);
        let index = ["--no-sparse-index", "--sparse-index"][sparse_index as usize];
        git(&f.wt, &["sparse-checkout", "init", "--cone", index]);
        git(&f.wt, &["sparse-checkout", "set", "src"]);
        assert!(!f.wt.join("docs/guide.md").exists());
        let got = inspect(&f.wt, BRANCH);
        if !sparse_index {
            let got = got.unwrap();
            assert_eq!((got.modified, got.untracked), (0, 0), "{got:?}");
        }
        write(&f.wt.join("docs/notes.md"), "the users\n");
        write(&f.wt.join("docs/guide.md"), "guide, edited\n");
        match (sparse_index, inspect(&f.wt, BRANCH)) {
            (false, got) => {
                let got = got.unwrap();
                assert_eq!((got.modified, got.untracked), (1, 1), "{got:?}");
            }
            (true, got) => assert!(got.is_err(), "{got:?}"),
        }
    }
}
