//! Code a job plants in its own repository (filter drivers, fsmonitor, hooks) is never executed by
//! isolate when it inspects, imports and removes the worktree. The markers live outside the
//! sandbox's writable paths, so only isolate itself could create them.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::support::*;

fn plant(markers: &Path) -> String {
    let m = markers.display();
    format!(
        "git config filter.evil.clean 'touch {m}/filter-clean; cat'; \
         git config filter.evil.smudge 'touch {m}/filter-smudge; cat'; \
         git config filter.evil.process 'touch {m}/filter-process'; \
         git config filter.evil.required true; \
         echo '* filter=evil' > .gitattributes; mkdir -p .git/info; echo '* filter=evil' > .git/info/attributes; \
         git config core.fsmonitor 'touch {m}/fsmonitor; echo'; \
         git config core.hooksPath .git/evil-hooks; mkdir -p .git/evil-hooks .git/hooks; \
         for h in pre-commit post-checkout post-merge reference-transaction pre-auto-gc post-index-change; do \
           printf '#!/bin/sh\\ntouch {m}/hook-%s\\n' $h > .git/evil-hooks/$h; cp .git/evil-hooks/$h .git/hooks/$h; \
           chmod +x .git/evil-hooks/$h .git/hooks/$h; done; \
         git config core.worktree {m}; git config core.sshCommand 'touch {m}/ssh'; \
         git config diff.external 'touch {m}/diff'; "
    )
}

fn assert_no_marker(markers: &Path) {
    let made: Vec<_> = fs::read_dir(markers)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(made.is_empty(), "planted code ran: {made:?}");
}

#[test]
fn planted_filters_fsmonitor_and_hooks_do_not_run_when_the_worktree_is_kept() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir_all(&markers).unwrap();
    // A tracked file changed without changing its size, with an old mtime: only its content can
    // tell, so a status that ran clean filters would run the planted one here.
    let script = format!(
        "{} printf 'HELLO\\n' > README; touch -d '2001-01-01' README",
        plant(&markers)
    );
    let (out, value) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    assert_eq!(value["worktree"]["removed"], false);
    assert_eq!(value["worktree"]["dirty"]["modified"], 1, "{value}");
    assert_no_marker(&markers);
}

#[test]
fn planted_filters_fsmonitor_and_hooks_do_not_run_when_the_worktree_is_removed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir_all(&markers).unwrap();
    // Commit everything (so the tree is clean and isolate imports and removes it), with the planted
    // config in place afterwards.
    let script = format!(
        "echo work > work.txt && git add work.txt && git commit -q -m work --no-verify; {} true",
        plant(&markers)
    );
    let (out, value) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    assert_no_marker(&markers);
    // .gitattributes is new and untracked: the worktree holds work, so it is kept, and the
    // commit was imported all the same.
    assert_eq!(value["worktree"]["commits"], 1, "{value}");
    env.assert_fsck(&repo);
}

/// Plants, in the job's own repository, hooks and an fsmonitor that run `what` (a shell command) in
/// the background, detached in a session of their own, and record their pid in the worktree.
fn plant_daemon(what: &str) -> String {
    format!(
        "mkdir -p .git/hooks && \
         printf '#!/bin/sh\\nsetsid sh -c \"echo \\\\$\\\\$ >> daemon.pids; {what}\" </dev/null >/dev/null 2>&1 &\\nexit 0\\n' > .git/hooks/post-merge && \
         cp .git/hooks/post-merge .git/hooks/pre-commit && cp .git/hooks/post-merge .git/hooks/post-commit && \
         cp .git/hooks/post-merge .git/fsmonitor.sh && chmod +x .git/hooks/* .git/fsmonitor.sh && \
         git config core.hooksPath .git/hooks && git config core.fsmonitor .git/fsmonitor.sh; "
    )
}

fn commit_on_main(env: &TestEnv, repo: &Path, file: &str) {
    fs::write(repo.join(file), "upstream\n").unwrap();
    env.git(repo, ["add", file]);
    env.git(repo, ["commit", "-q", "-m", file]);
}

fn daemons(worktree: &Path) -> Vec<i32> {
    fs::read_to_string(worktree.join("daemon.pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn planted_code_started_by_sync_and_merge_does_not_outlive_them() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = format!(
        "echo w > w.txt && git add w.txt && git commit -q -m w --no-verify; {} echo pending > p.txt",
        plant_daemon("exec sleep 300")
    );
    let (out, report) = env.worktree_job(&repo, &["--keep"], &script);
    assert_status(&out, 0);
    let wt = std::path::PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    let id = report["id"].as_str().unwrap().to_string();
    commit_on_main(&env, &repo, "upstream.txt");
    // sync runs git status, a checkpoint commit and a merge in the worktree: the hooks and the
    // fsmonitor start their daemons, which must be gone when sync returns.
    let out = env.isolate(&repo, ["sync", &id]);
    assert_status(&out, 0);
    let started = daemons(&wt);
    assert!(!started.is_empty(), "the planted code did not run at all");
    for pid in &started {
        assert!(
            !alive(*pid),
            "a daemon planted in the job outlived sync: {pid}"
        );
    }
    commit_on_main(&env, &repo, "more.txt");
    let out = env.isolate(&repo, ["merge", &id, "--yes"]);
    let after = daemons(&wt);
    for pid in &after {
        assert!(
            !alive(*pid),
            "a daemon planted in the job outlived merge ({}): {pid}",
            stderr(&out)
        );
    }
}

#[test]
fn the_jobs_policy_follows_it_into_sync_merge_and_resume() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(env.home.join("secret.txt"), "the user's secret\n").unwrap();
    let secret = env.home.join("secret.txt");
    let leak = format!("cat {} >> leaked.txt 2>/dev/null", secret.display());
    let script = format!(
        "echo w > w.txt && git add w.txt && git commit -q -m w --no-verify; {} echo pending > p.txt",
        plant_daemon(&leak)
    );
    let (out, report) = env.worktree_job(&repo, &["--keep", "--policy", "strict"], &script);
    assert_status(&out, 0);
    let wt = std::path::PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    let id = report["id"].as_str().unwrap().to_string();
    // The handoff names the job's policy.
    let handoff = report["worktree"]["handoff"].as_str().unwrap();
    assert!(handoff.contains("--policy strict"), "{handoff}");
    commit_on_main(&env, &repo, "upstream.txt");
    assert_status(&env.isolate(&repo, ["sync", &id]), 0);
    assert!(!daemons(&wt).is_empty(), "the planted code did not run");
    // What ran in the worktree during sync ran under strict: it could not read the secret.
    let leaked = fs::read_to_string(wt.join("leaked.txt")).unwrap_or_default();
    assert!(
        !leaked.contains("secret"),
        "sync ran the job's code under a wider policy"
    );
    // --resume runs under the job's policy; another --policy only narrows it.
    let cat = format!("cat {}", secret.display());
    for extra in [vec![], vec!["--policy", "default"]] {
        let mut args = vec!["run", "--resume", &id];
        args.extend(extra.iter().copied());
        args.extend(["--", "sh", "-c", &cat]);
        let out = env.isolate(&repo, &args);
        assert!(
            !stdout(&out).contains("secret"),
            "{args:?}: {}",
            stdout(&out)
        );
        assert!(
            stderr(&out).contains("Permission denied"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // Narrowed by offline: no TCP either, and the reads of strict still hold.
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let script = format!("{cat}; exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let out = env.isolate(
        &repo,
        [
            "run", "--resume", &id, "--policy", "offline", "--", "bash", "-c", &script,
        ],
    );
    assert!(!stdout(&out).contains("secret") && !stdout(&out).contains("connected"));
    assert!(
        tcp.accept().is_err(),
        "a narrowed resume reached the network"
    );
}

#[test]
fn variables_the_jobs_policy_removes_never_reach_its_planted_code() {
    // A policy that keeps a token from the job; the token is in isolate's own environment when
    // the user runs sync and merge, which run git in the worktree, where the job planted hooks.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let policy = env.file(
        "notoken.toml",
        "extends = \"default\"\n[environment]\nremove = [\"ISOLATE_TEST_TOKEN\"]\n",
    );
    let token = ("ISOLATE_TEST_TOKEN", "ghp_the_users_token");
    let script = format!(
        "echo \"job: $ISOLATE_TEST_TOKEN\" > seen.txt; \
         echo w > w.txt && git add w.txt && git commit -q -m w --no-verify; {} echo pending > p.txt",
        plant_daemon("echo planted: $ISOLATE_TEST_TOKEN >> seen.txt")
    );
    let report_path = env.path().join("notoken.json");
    let out = env.isolate_with(
        &repo,
        &[token],
        &[
            "run",
            "--worktree",
            "--keep",
            "--policy",
            policy.to_str().unwrap(),
            "--report",
            report_path.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert_status(&out, 0);
    let report = env.report(&report_path);
    let wt = std::path::PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    let id = report["id"].as_str().unwrap().to_string();
    commit_on_main(&env, &repo, "upstream.txt");
    assert_status(&env.isolate_with(&repo, &[token], &["sync", &id]), 0);
    commit_on_main(&env, &repo, "more.txt");
    let _ = env.isolate_with(&repo, &[token], &["merge", "--yes", &id]);
    let seen = fs::read_to_string(wt.join("seen.txt")).unwrap();
    assert!(
        seen.contains("planted:"),
        "the planted code did not run: {seen}"
    );
    assert!(
        !seen.contains(token.1),
        "a removed variable reached the job's code: {seen}"
    );
}

#[test]
fn merge_lands_exactly_what_was_shown_whatever_the_job_planted() {
    // A post-merge hook (and the same as pre-commit, post-commit and a merge driver) that rewrites
    // the merge: a changed README and a new sneaky.sh, neither in the job's change.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let rewrite = "mkdir -p .git/hooks .git/info && printf '#!/bin/sh\\necho rewritten > README; echo evil > sneaky.sh; \
        git add -A; T=$(git write-tree); C=$(git commit-tree $T -p HEAD -m rewritten); git update-ref HEAD $C\\n' \
        > .git/hooks/post-merge && chmod +x .git/hooks/post-merge && \
        cp .git/hooks/post-merge .git/hooks/post-commit && cp .git/hooks/post-merge .git/hooks/pre-merge-commit && \
        git config core.hooksPath .git/hooks && \
        git config merge.evil.driver 'echo evil > %A; true' && echo '* merge=evil' > .git/info/attributes";
    let script = format!(
        "echo feature > feature.txt && git add feature.txt && git commit -q -m feature --no-verify && {rewrite}"
    );
    let (out, report) = env.worktree_job(&repo, &["--keep"], &script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap().to_string();
    fs::write(repo.join("other.txt"), "other\n").unwrap();
    env.git(&repo, ["add", "other.txt"]);
    env.git(&repo, ["commit", "-q", "-m", "other"]);
    let shown = env.git(&repo, ["rev-parse", "main"]);
    let tip = env.git(&repo, ["rev-parse", &format!("isolate/{id}")]);
    let expected = env.git(&repo, ["merge-tree", "--write-tree", &shown, &tip]);
    let out = env.isolate(&repo, ["merge", "--yes", &id]);
    assert_status(&out, 0);
    assert_eq!(env.git(&repo, ["rev-parse", "main^{tree}"]), expected);
    assert_eq!(fs::read_to_string(repo.join("README")).unwrap(), "hello\n");
    assert!(!repo.join("sneaky.sh").exists());
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    env.assert_fsck(&repo);
}

/// The user's own filter drivers, whose commands run what lies in the checkout (a script of the
/// project's; `python3 -m` finding a module at the top): git checks a merge out in the index's
/// order, so the job's changed script, or a module it added, was on disk before the driver ran for
/// a later file, and ran with the user's rights. The files a driver writes are checked out first,
/// where nothing of the job's is yet; the merge lands whole all the same.
#[test]
fn the_users_filter_drivers_never_run_what_the_merge_brings() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir(&markers).unwrap();
    fs::create_dir_all(repo.join("bin")).unwrap();
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::write(repo.join("bin/smudge.sh"), "cat\n").unwrap();
    fs::write(repo.join("src/a.txt"), "a\n").unwrap();
    fs::write(repo.join("src/b.dat"), "b\n").unwrap();
    fs::write(
        repo.join(".gitattributes"),
        "*.txt filter=kw\n*.dat filter=py\n",
    )
    .unwrap();
    fs::write(repo.join(".gitignore"), "__pycache__/\n").unwrap();
    env.git(&repo, ["config", "filter.kw.smudge", "sh bin/smudge.sh"]);
    env.git(&repo, ["config", "filter.kw.clean", "cat"]);
    env.git(&repo, ["config", "filter.py.smudge", "python3 -m pysmudge"]);
    env.git(&repo, ["config", "filter.py.clean", "cat"]);
    fs::write(
        repo.join("pysmudge.py"),
        "import sys\nsys.stdout.write(sys.stdin.read())\n",
    )
    .unwrap();
    env.git(&repo, ["add", "."]);
    env.git(&repo, ["commit", "-q", "-m", "filters"]);
    // The job's module is found first on `python3 -m`'s path only where it shadows the user's:
    // the user's lies at the top, so the job replaces it there.
    let m = markers.display();
    let script = format!(
        "printf 'echo ran >> {m}/smudge-sh; cat\\n' > bin/smudge.sh && \
         printf 'import sys\\nopen(\"{m}/pysmudge\", \"a\").write(\"ran\")\\nsys.stdout.write(sys.stdin.read())\\n' > pysmudge.py && \
         echo job > src/a.txt && echo job > src/b.dat && echo new > src/c.txt && \
         git add -A && git commit -q -m tidy"
    );
    let (out, report) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap().to_string();
    let out = env.isolate(&repo, ["merge", "--yes", &id]);
    assert_status(&out, 0);
    // The preview puts the files the drivers run first, saying so.
    for file in ["bin/smudge.sh", "pysmudge.py"] {
        assert!(
            stderr(&out)
                .lines()
                .any(|l| l.contains(file) && l.contains("filter drivers")),
            "{file} not flagged:\n{}",
            stderr(&out)
        );
    }
    assert!(
        fs::read_dir(&markers).unwrap().next().is_none(),
        "a driver ran the job's code: {:?}",
        fs::read_dir(&markers)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect::<Vec<_>>()
    );
    for (file, text) in [
        ("src/a.txt", "job\n"),
        ("src/b.dat", "job\n"),
        ("src/c.txt", "new\n"),
    ] {
        assert_eq!(fs::read_to_string(repo.join(file)).unwrap(), text, "{file}");
    }
    assert!(fs::read_to_string(repo.join("bin/smudge.sh"))
        .unwrap()
        .contains("ran"));
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    env.assert_fsck(&repo);
}

/// The same with the driver's own script among the files it writes (`*.sh filter=kw`): checked
/// out with them, the job's version of it ran for the next. A merge that changes such a file is
/// refused, saying so; nothing ran and nothing moved.
#[test]
fn a_merge_that_changes_a_script_a_driver_runs_and_writes_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir(&markers).unwrap();
    fs::create_dir_all(repo.join("bin")).unwrap();
    fs::write(repo.join("bin/smudge.sh"), "cat\n").unwrap();
    fs::write(repo.join("a.sh"), "echo a\n").unwrap();
    fs::write(repo.join(".gitattributes"), "*.sh filter=kw\n").unwrap();
    env.git(&repo, ["config", "filter.kw.smudge", "sh bin/smudge.sh"]);
    env.git(&repo, ["config", "filter.kw.clean", "cat"]);
    env.git(&repo, ["add", "."]);
    env.git(&repo, ["commit", "-q", "-m", "filters"]);
    let script = format!(
        "printf 'echo ran >> {}/smudge-sh; cat\\n' > bin/smudge.sh && echo 'echo z' > z.sh && \
         git add -A && git commit -q -m tweak",
        markers.display()
    );
    let (out, report) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap().to_string();
    let main = env.git(&repo, ["rev-parse", "main"]);
    let out = env.isolate(&repo, ["merge", "--yes", &id]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("bin/smudge.sh"), "{}", stderr(&out));
    assert!(
        fs::read_dir(&markers).unwrap().next().is_none(),
        "the job's script ran"
    );
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);
    assert_eq!(
        fs::read_to_string(repo.join("bin/smudge.sh")).unwrap(),
        "cat\n"
    );
    assert!(!repo.join("z.sh").exists());
}

#[test]
fn prune_run_inside_a_kept_worktree_runs_nothing_the_job_planted() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir_all(&markers).unwrap();
    // Two branches of the job's that change the same line, one named as a job's (no job on record
    // has it), and a merge driver for every file: a merge of them, run by isolate in the job's
    // repository outside the sandbox, would run the driver with the user's rights.
    let m = markers.display();
    let script = format!(
        "git checkout -q -b side && echo side > README && git commit -qam side && \
         git checkout -q - && echo job > README && git commit -qam job && \
         git branch isolate/evil-abcd side && \
         git config merge.evil.driver 'touch {m}/merge-driver; false' && \
         mkdir -p .git/info && echo '* merge=evil' > .git/info/attributes && \
         echo wip > untracked.txt"
    );
    let (out, value) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    assert_eq!(value["worktree"]["removed"], false, "{value}");
    // The user looks at the kept worktree, as the end of the job says, and prunes from there.
    let kept = std::path::PathBuf::from(value["worktree"]["path"].as_str().unwrap());
    env.isolate(&kept, ["prune"]);
    assert_no_marker(&markers);
    assert!(
        env.git_output(
            &kept,
            [
                "rev-parse",
                "--verify",
                "--quiet",
                "refs/heads/isolate/evil-abcd"
            ]
        )
        .status
        .success(),
        "the job's own branch is the job's"
    );
}

/// `merge --all` and a job run in place, each started inside a kept worktree, ran `git rev-parse` and
/// `git config` there with the user's rights to find the project: git read the job's config, whose
/// include the job had pointed at a FIFO (a directory made in its TMPDIR and moved into `.git`),
/// and hung for ten minutes. Both are refused from the paths before any git runs there.
#[test]
fn merge_all_and_a_run_in_place_inside_a_kept_worktree_run_no_git_there() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = "mkdir \"$TMPDIR/d\" && mkfifo \"$TMPDIR/d/f\" && mv \"$TMPDIR/d\" .git/d && \
                  printf '[include]\\n\\tpath = d/f\\n' >> .git/config && echo wip > untracked.txt";
    let (out, value) = env.worktree_job(&repo, &[], script);
    assert_status(&out, 0);
    assert_eq!(value["worktree"]["removed"], false, "{value}");
    let kept = PathBuf::from(value["worktree"]["path"].as_str().unwrap());
    assert!(kept.join(".git/d/f").exists());
    for (args, status) in [
        (vec!["merge", "--all", "--yes"], 1),
        (vec!["run", "--", "true"], 125),
    ] {
        let cmd = env.isolate_cmd(&kept, &args).stdin(Stdio::null()).spawn();
        let out = finish(cmd.unwrap(), Duration::from_secs(30));
        assert_status(&out, status);
        assert!(
            stderr(&out).contains("is the worktree of an isolate job"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// The kept worktree of a job that removed its `[isolate]` mark and planted filter drivers, under
/// the `worktree_root` `root` (the user's configuration names it); the job's markers go in `markers`.
fn kept_with_planted_filters(env: &TestEnv, repo: &Path, root: &Path, markers: &Path) -> PathBuf {
    fs::create_dir_all(env.home.join(".config/isolate")).unwrap();
    fs::write(
        env.home.join(".config/isolate/config.toml"),
        format!("worktree_root = \"{}\"\n", root.display()),
    )
    .unwrap();
    let m = markers.display();
    let script = format!(
        "git config --remove-section isolate; \
         git config filter.pwn.clean 'touch {m}/clean; cat' && \
         git config filter.pwn.smudge 'touch {m}/smudge; cat' && \
         echo '* filter=pwn' > .gitattributes && git add .gitattributes && git commit -qm attrs && \
         git branch main-copy && echo wip > untracked.txt"
    );
    let (out, value) = env.worktree_job(repo, &[], &script);
    assert_status(&out, 0);
    assert_eq!(value["worktree"]["removed"], false, "{value}");
    PathBuf::from(value["worktree"]["path"].as_str().unwrap())
}

/// `run --worktree` in `dir`, a kept worktree, is refused before git runs there, by the roots
/// isolate keeps (job/roots.rs) and, in a state directory an earlier isolate left without them,
/// by the records; nothing the job planted ran.
fn refused_with_and_without_roots(env: &TestEnv, dir: &Path, markers: &Path) {
    for roots in ["kept", "removed"] {
        if roots == "removed" {
            fs::remove_dir_all(env.state.join("roots")).unwrap();
        }
        let out = env.isolate(dir, ["run", "--worktree", "--", "true"]);
        assert_status(&out, 125);
        assert!(
            stderr(&out).contains("is the worktree of an isolate job"),
            "{roots}: {}",
            stderr(&out)
        );
        assert_no_marker(markers);
    }
    assert!(env.state.join("roots").is_dir());
}

/// `run --worktree` started inside a kept worktree under a `worktree_root` of the user's (outside
/// the state directory) whose job removed isolate's mark from its config: the worktree on record
/// is still a job's, so it is refused before git runs there (its clean and smudge filters ran with
/// the user's rights, and its `.isolate.toml` would have been the project's configuration).
#[test]
fn run_inside_a_kept_worktree_whose_job_removed_its_mark_runs_nothing_the_job_planted() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir_all(&markers).unwrap();
    let root = env.path().join("trees");
    let kept = kept_with_planted_filters(&env, &repo, &root, &markers);
    assert!(kept.starts_with(&root), "{}", kept.display());
    let named: Vec<String> = fs::read_dir(env.state.join("roots"))
        .unwrap()
        .map(|e| fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    let canonical = fs::canonicalize(&root).unwrap();
    assert_eq!(named, [canonical.display().to_string()]);
    refused_with_and_without_roots(&env, &kept, &markers);
}

/// A `worktree_root` reached through a link: once the root's directory has moved and the link
/// follows it, or in a state directory an earlier isolate left without its roots, `run --worktree`
/// inside a kept worktree is still refused before git runs there (found in review).
#[test]
fn run_inside_a_kept_worktree_under_a_moved_or_linked_root_runs_nothing_the_job_planted() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let markers = env.path().join("markers");
    fs::create_dir_all(&markers).unwrap();
    let (first, moved, link) = (
        env.path().join("trees-a"),
        env.path().join("trees-b"),
        env.path().join("trees"),
    );
    fs::create_dir_all(&first).unwrap();
    std::os::unix::fs::symlink(&first, &link).unwrap();
    let kept = kept_with_planted_filters(&env, &repo, &link, &markers);
    let real = fs::canonicalize(&first).unwrap();
    let name = kept
        .strip_prefix(&link)
        .or_else(|_| kept.strip_prefix(&real))
        .unwrap()
        .to_path_buf();
    fs::rename(&first, &moved).unwrap();
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&moved, &link).unwrap();
    refused_with_and_without_roots(&env, &link.join(&name), &markers);
}
