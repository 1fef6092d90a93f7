//! What the inspection refuses, and that nothing planted runs and nothing is written.

use super::*;

#[test]
fn dot_git_symlink_or_file_is_refused() {
    let f = fixture();
    let tmp = f._tmp.path();

    let linked = tmp.join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(f.wt.join(".git"), linked.join(".git")).unwrap();
    let err = inspect(&linked, BRANCH).unwrap_err();
    assert!(matches!(err, InspectError::NotARepository { .. }), "{err}");
    assert!(err.to_string().contains("symlink"), "{err}");

    let gitfile = tmp.join("gitfile");
    write(
        &gitfile.join(".git"),
        &format!("gitdir: {}\n", f.wt.join(".git").display()),
    );
    let err = inspect(&gitfile, BRANCH).unwrap_err();
    assert!(matches!(err, InspectError::NotARepository { .. }), "{err}");

    let nothing = tmp.join("nothing");
    std::fs::create_dir(&nothing).unwrap();
    assert!(matches!(
        inspect(&nothing, BRANCH).unwrap_err(),
        InspectError::NotARepository { .. }
    ));
}

/// Plant in the job repository (and in the project configuration it includes) everything that
/// would make a careless status run a command; return the marker files those would create.
fn plant_traps(f: &Fixture) -> Vec<PathBuf> {
    let markers: Vec<PathBuf> = (1..=7)
        .map(|n| f._tmp.path().join(format!("marker{n}")))
        .collect();
    let touch = |n: usize| format!("touch {}", markers[n - 1].display());
    let elsewhere = f._tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let config = f.wt.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[filter \"evil\"]\n\tclean = {}; cat\n\tsmudge = {}; cat\n\trequired = true\n\
         [FILTER \"proc\"]\n\tprocess = {}\n\
         [diff \"evil\"]\n\ttextconv = {}\n\tcommand = {}\n\
         [core]\n\tfsmonitor = {}\n\thooksPath = {}\n\tworktree = {}\n\
         [include]\n\tpath = {}\n",
        touch(1),
        touch(1),
        touch(2),
        touch(3),
        touch(3),
        touch(4),
        f.wt.join(".git/evil-hooks").display(),
        elsewhere.display(),
        f.project.join(".git/config").display(),
    ));
    std::fs::write(&config, text).unwrap();
    let mut project_config = std::fs::read_to_string(f.project.join(".git/config")).unwrap();
    project_config.push_str(&format!("[filter \"evil\"]\n\tclean = {}\n", touch(5)));
    std::fs::write(f.project.join(".git/config"), project_config).unwrap();
    for hook in ["post-index-change", "reference-transaction", "pre-commit"] {
        for dir in [".git/hooks", ".git/evil-hooks"] {
            let path = f.wt.join(dir).join(hook);
            write(&path, &format!("#!/bin/sh\n{}\n", touch(6)));
            let mut perms = std::fs::metadata(&path).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            std::fs::set_permissions(&path, perms).unwrap();
        }
    }
    write(
        &f.wt.join(".gitattributes"),
        "* filter=evil diff=evil\nb.txt filter=proc\n",
    );
    write(&f.wt.join(".git/info/attributes"), "* filter=evil\n");
    // Same size, new content, a different mtime: the status cannot decide on stat data and
    // size alone and must hash the file, which is when a clean filter would run.
    for (name, content) in [("a.txt", "ALPHA\n"), ("b.txt", "BRAVO\n")] {
        let path = f.wt.join(name);
        let before = std::fs::read(&path).unwrap();
        write(&path, content);
        assert_eq!(before.len(), content.len());
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_modified(
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000),
        )
        .unwrap();
    }
    markers
}

#[test]
fn nothing_planted_in_the_repository_runs() {
    let f = fixture();
    let markers = plant_traps(&f);
    let got = inspect(&f.wt, BRANCH).unwrap();
    for marker in &markers {
        assert!(
            !marker.exists(),
            "{} was created: something ran",
            marker.display()
        );
    }
    assert_eq!(
        got.modified, 2,
        "a.txt and b.txt are modified, seen without any filter: {got:?}"
    );
    assert_eq!(got.untracked, 1, ".gitattributes: {got:?}");
    assert_eq!(
        got.head_branch.as_deref(),
        Some(BRANCH),
        "core.worktree is ignored"
    );
}

/// The control for the test above: the same traps with a repository opened the ordinary
/// (trusting) way do run the planted clean filter, so the test above would notice a regression.
#[test]
fn planted_filter_would_run_if_the_repository_were_trusted() {
    let f = fixture();
    let markers = plant_traps(&f);
    write(&f.wt.join(".gitattributes"), "* filter=evil\n");
    let mut repo = gix::open_opts(f.wt.join(".git"), gix::open::Options::isolated()).unwrap();
    repo.set_workdir(f.wt.clone()).unwrap();
    // Whether that status then succeeds depends on how the planted commands treat their
    // pipes; what matters is that they were spawned.
    let _ = count_status(
        &repo,
        &mut Inspection::default(),
        &mut { u64::MAX },
        CheckedOut::Unknown,
    );
    assert!(
        markers[0].exists(),
        "a trusting status runs the planted clean filter; if gix stopped doing so, this control is moot"
    );
    write(&f.wt.join(".gitattributes"), "* filter=proc\n");
    std::fs::remove_file(f.wt.join(".git/info/attributes")).unwrap();
    let _ = count_status(
        &repo,
        &mut Inspection::default(),
        &mut { u64::MAX },
        CheckedOut::Unknown,
    );
    assert!(
        markers[1].exists(),
        "a trusting status runs the planted process filter"
    );
}

#[test]
fn redirections_and_broken_gitmodules_do_not_derail_it() {
    let f = fixture();
    let config = f.wt.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("[core]\n\tbare = true\n\tworktree =\n[extensions]\n\tworktreeConfig = true\n");
    std::fs::write(&config, text).unwrap();
    write(
        &f.wt.join(".git/config.worktree"),
        "[core]\n\tworktree = /\n",
    );
    write(
        &f.wt.join(".gitmodules"),
        "[submodule \"x\"\n\tpath = \n[[[ not a config\n",
    );
    write(&f.wt.join("a.txt"), "alpha, changed\n");
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!((got.modified, got.untracked), (1, 1), "{got:?}");
}

#[test]
fn inspection_writes_nothing() {
    let f = fixture();
    // Make the index stale for every file (same content, new mtimes) so a status would like
    // to refresh and write it.
    for name in ["a.txt", "b.txt", "src/lib.rs"] {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(f.wt.join(name))
            .unwrap();
        file.set_modified(
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_100_000_000),
        )
        .unwrap();
    }
    let snapshot = |dir: &Path| {
        let mut all = Vec::new();
        let mut stack = vec![dir.to_owned()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let entry = entry.unwrap();
                let meta = entry.metadata().unwrap();
                if meta.is_dir() {
                    stack.push(entry.path());
                } else {
                    all.push((entry.path(), meta.len(), meta.modified().unwrap()));
                }
            }
        }
        all.sort();
        all
    };
    let git_before = snapshot(&f.wt.join(".git"));
    let project_before = snapshot(&f.project.join(".git"));
    let got = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(got.modified, 0, "{got:?}");
    missing_from(&f.project.join(".git"), std::slice::from_ref(&f.base)).unwrap();
    assert_eq!(snapshot(&f.wt.join(".git")), git_before);
    assert_eq!(snapshot(&f.project.join(".git")), project_before);
}

#[test]
fn pattern_files_larger_than_isolate_reads_are_refused_before_gix_reads_them() {
    // gix reads a `.gitignore` or `.gitattributes` whole, however large, and keeps every line: a
    // sparse file of gigabytes, or many large ones, would be read into memory. Each is refused at
    // once: in the top, in a tracked directory, in an untracked one the walk would enter, in a
    // directory named as a tracked one but for case under the job's `core.ignoreCase`, the blob
    // the index names where the work tree has a link, and too many together.
    let sparse = |path: &Path, len: u64| {
        std::fs::File::create(path).unwrap().set_len(len).unwrap();
    };
    let over = (8 << 20) + 1;
    for what in [
        "top",
        "tracked",
        "untracked",
        "case",
        "blob",
        "grown",
        "together",
    ] {
        let f = fixture();
        write(&f.wt.join("new/deeper/file"), "x\n");
        match what {
            "top" => sparse(&f.wt.join(".gitattributes"), over),
            "tracked" => sparse(&f.wt.join("src/.gitignore"), over),
            "untracked" => sparse(&f.wt.join("new/deeper/.gitignore"), over),
            "case" => {
                git(&f.wt, &["config", "core.ignoreCase", "true"]);
                write(&f.wt.join("SRC/file"), "x\n");
                sparse(&f.wt.join("SRC/.gitignore"), over);
            }
            "blob" => {
                let big = f.wt.join("big");
                sparse(&big, over);
                let id = git(&f.wt, &["hash-object", "-w", "big"]);
                std::fs::remove_file(&big).unwrap();
                let info = format!("100644,{id},src/.gitattributes");
                git(&f.wt, &["update-index", "--add", "--cacheinfo", &info]);
                std::os::unix::fs::symlink("../a.txt", f.wt.join("src/.gitattributes")).unwrap();
            }
            // A tracked pattern file grown in place: its directory holds only what the index
            // names (settled.rs), and is checked all the same.
            "grown" => {
                write(&f.wt.join("src/.gitattributes"), "*.rs text\n");
                git(&f.wt, &["add", "src/.gitattributes"]);
                git(&f.wt, &["commit", "-q", "-m", "attributes"]);
                std::fs::remove_dir_all(f.wt.join("new")).unwrap();
                sparse(&f.wt.join("src/.gitattributes"), over);
            }
            _ => {
                for n in 0..3 {
                    let dir = f.wt.join(format!("many/d{n}"));
                    write(&dir.join("file"), "x\n");
                    sparse(&dir.join(".gitignore"), 6 << 20);
                }
            }
        }
        let err = inspect(&f.wt, BRANCH).expect_err(what).to_string();
        assert!(
            err.contains("more than isolate reads of a pattern file") || err.contains("together"),
            "{what}: {err}"
        );
    }
    // At the bound, a directory of that name, and a link gix does not follow are read as git
    // reads them.
    let f = fixture();
    sparse(&f.wt.join("src/.gitattributes"), 8 << 20);
    std::fs::create_dir(f.wt.join(".gitignore.d")).unwrap();
    std::fs::create_dir_all(f.wt.join("new/.gitignore")).unwrap();
    write(&f.wt.join("new/file"), "x\n");
    std::os::unix::fs::symlink("/dev/zero", f.wt.join("new/.gitattributes")).unwrap();
    let insp = inspect(&f.wt, BRANCH).unwrap();
    assert_eq!(insp.untracked, 3, "{insp:?}");
}
