//! A job's life in a worktree: creation, what CMD gets, the end, and the cleanup decision.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::*;

/// Runs `script` with `sh -c` in a fresh worktree of `repo`; returns the output and the report.
fn job(
    env: &TestEnv,
    dir: &Path,
    extra: &[&str],
    script: &str,
) -> (std::process::Output, serde_json::Value) {
    env.worktree_job(dir, extra, script)
}

fn wt_path(report: &serde_json::Value) -> PathBuf {
    PathBuf::from(report["worktree"]["path"].as_str().unwrap())
}

#[test]
fn a_clean_job_leaves_no_directory_and_no_branch() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = job(&env, &repo, &[], "test -f README && echo ran");
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "ran\n");
    assert!(env.worktree_dirs().is_empty(), "{:?}", env.worktree_dirs());
    assert!(env.isolate_branches(&repo).is_empty());
    assert!(
        !env.git(&repo, ["for-each-ref", "refs/isolate/"])
            .contains("isolate"),
        "base pin left"
    );
    assert_eq!(report["state"], "exited");
    assert_eq!(report["exit"]["code"], 0);
    assert_eq!(report["worktree"]["removed"], true);
    assert_eq!(report["worktree"]["branch_kept"], false);
    assert_eq!(report["sandbox"]["enforced"], true);
    assert!(report["sandbox"]["landlock_abi"].as_u64().unwrap() >= 3);
    assert!(
        stderr(&out).contains("worktree: removed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_job_that_commits_leaves_its_branch_in_the_project_and_no_directory() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let main_before = env.git(&repo, ["rev-parse", "main"]);
    let (out, report) = job(
        &env,
        &repo,
        &[],
        "echo feature > feature.txt && git add feature.txt && git commit -q -m 'agent work'",
    );
    assert_status(&out, 0);
    let branch = report["worktree"]["branch"].as_str().unwrap().to_string();
    assert_eq!(env.isolate_branches(&repo), vec![branch.clone()]);
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%s", &branch]),
        "agent work"
    );
    assert_eq!(
        env.git(&repo, ["show", &format!("{branch}:feature.txt")]),
        "feature"
    );
    assert_eq!(
        env.git(&repo, ["rev-parse", "main"]),
        main_before,
        "main moved"
    );
    assert!(env.worktree_dirs().is_empty());
    env.assert_fsck(&repo);
    assert_eq!(report["worktree"]["commits"], 1);
    assert_eq!(report["worktree"]["removed"], true);
    assert_eq!(report["worktree"]["branch_kept"], true);
    let handoff = report["worktree"]["handoff"].as_str().unwrap();
    assert!(
        handoff.contains("merge --no-ff") && handoff.contains(&branch),
        "{handoff}"
    );
    // The end block offers isolate's own merge beside git's, and the line it prints works.
    let id = report["id"].as_str().unwrap();
    let said = stderr(&out);
    let offered = format!("  or:       isolate merge {id}   (shows the change first");
    assert!(said.contains(&offered), "{said}");
    assert_status(&env.isolate(&repo, ["merge", id, "--yes"]), 0);
    assert_eq!(env.git(&repo, ["show", "main:feature.txt"]), "feature");
    assert_eq!(
        fs::read_to_string(repo.join("feature.txt")).unwrap(),
        "feature\n"
    );
    // The base pin goes with the worktree; the branch alone keeps the commits.
    assert!(env.git(&repo, ["for-each-ref", "refs/isolate/"]).is_empty());
}

#[test]
fn commits_use_the_projects_identity_and_run_its_hooks_inside_the_sandbox() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, ["config", "user.name", "Project Person"]);
    env.git(&repo, ["config", "user.email", "project@example.com"]);
    let hook = repo.join(".git/hooks/pre-commit");
    fs::create_dir_all(hook.parent().unwrap()).unwrap();
    // The hook records that it ran (in the job's worktree) and tries to write into the project.
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\necho hook-ran >> \"$ISOLATE_WORKTREE/.git/hook-ran\"\necho evil >> {}/README 2>/dev/null\nexit 0\n",
            repo.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (out, report) = job(
        &env,
        &repo,
        &["--keep"],
        "echo x > x.txt && git add x.txt && git commit -q -m work && cat .git/hook-ran",
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "hook-ran\n");
    let branch = report["worktree"]["branch"].as_str().unwrap();
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%an <%ae>", branch]),
        "Project Person <project@example.com>"
    );
    assert_eq!(fs::read_to_string(repo.join("README")).unwrap(), "hello\n");
}

/// The user's global identity, and the one a conditional include picks for the project's path,
/// are the job's own: a tool that hides the global configuration from the commands it runs (Gemini
/// CLI sets GIT_CONFIG_GLOBAL=/dev/null) still commits as the user, in a worktree whose path no
/// `includeIf "gitdir:"` of the project's matches.
#[test]
fn commits_keep_the_users_identity_without_the_global_configuration() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let work = env.file("work.gitconfig", "[user]\n\tname = Work Person\n");
    let global = env.path().join("gitconfig");
    let mut text = fs::read_to_string(&global).unwrap();
    text.push_str(&format!(
        "[includeIf \"gitdir:{}/\"]\n\tpath = {}\n",
        repo.display(),
        work.display()
    ));
    fs::write(&global, text).unwrap();
    let (out, report) = job(
        &env,
        &repo,
        &[],
        "echo x > x.txt && git add x.txt && GIT_CONFIG_GLOBAL=/dev/null git commit -q -m work",
    );
    assert_status(&out, 0);
    let branch = report["worktree"]["branch"].as_str().unwrap();
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%an <%ae>", branch]),
        "Work Person <test@example.com>"
    );
}

#[test]
fn work_in_the_tree_keeps_the_worktree_and_the_branch() {
    let cases: &[(&str, &str, &str)] = &[
        ("untracked", "echo new > untracked.txt", "1 untracked"),
        ("modified", "echo changed >> README", "1 modified"),
        (
            "staged",
            "echo staged > staged.txt && git add staged.txt",
            "1 modified",
        ),
        (
            "stashed",
            "echo changed >> README && git stash -q",
            "1 stash entry",
        ),
        (
            "other branch",
            "git checkout -q -b side && echo s > s.txt && git add s.txt && git commit -q -m side",
            "1 ref with commits not in the project",
        ),
    ];
    for (what, script, reason) in cases {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let (out, report) = job(&env, &repo, &[], script);
        assert_status(&out, 0);
        let path = wt_path(&report);
        assert!(path.is_dir(), "{what}: worktree removed");
        assert_eq!(report["worktree"]["removed"], false, "{what}");
        let got = report["worktree"]["reason"].as_str().unwrap();
        assert!(
            got.contains(reason),
            "{what}: reason {got:?} lacks {reason:?}"
        );
        assert_eq!(
            env.isolate_branches(&repo).len(),
            1,
            "{what}: branch deleted"
        );
        assert!(stderr(&out).contains("kept at"), "{what}: {}", stderr(&out));
        // The base pin stays with a kept worktree: a gc in the project must not prune what it borrows.
        assert!(
            !env.git(&repo, ["for-each-ref", "refs/isolate/"]).is_empty(),
            "{what}"
        );
    }
}

#[test]
fn ignored_only_output_is_removed_with_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = job(
        &env,
        &repo,
        &[],
        "mkdir -p target/debug && echo bin > target/debug/app",
    );
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], true, "{report}");
    assert!(report["worktree"]["ignored"].as_u64().unwrap() >= 1);
    assert!(env.worktree_dirs().is_empty());
    assert!(env.isolate_branches(&repo).is_empty());
}

#[test]
fn keep_keeps_a_clean_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = job(&env, &repo, &["--keep"], "true");
    assert_status(&out, 0);
    assert!(wt_path(&report).is_dir());
    assert_eq!(report["worktree"]["reason"], "kept: --keep");
}

#[test]
fn exit_statuses_follow_the_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (script, status, state) in [
        ("exit 0", 0, "exited"),
        ("exit 7", 7, "exited"),
        ("kill -TERM $$", 143, "killed"),
        ("kill -KILL $$", 137, "killed"),
    ] {
        let (out, report) = job(&env, &repo, &[], script);
        assert_status(&out, status);
        assert_eq!(report["state"], state, "{script}");
    }
    let (out, report) = job(
        &env,
        &repo,
        &["--timeout", "1s", "--grace", "1s"],
        "sleep 60",
    );
    assert_status(&out, 124);
    assert_eq!(report["state"], "timed_out");
    assert_eq!(report["exit"]["signal"], 15);
    let said = stderr(&out);
    assert!(said.contains("timed out (its limit: 1s) after "), "{said}");
    assert!(!said.contains("after 1s after"), "{said}");

    let out = env.isolate(&repo, ["run", "--worktree", "--", "./no-such-command"]);
    assert_status(&out, 127);
    let out = env.isolate(&repo, ["run", "--worktree", "--", "src"]);
    assert_status(&out, 127);
    fs::write(repo.join("not-exec.sh"), "#!/bin/sh\n").unwrap();
    env.git(&repo, ["add", "not-exec.sh"]);
    env.git(
        &repo,
        ["commit", "-q", "-m", "a script without the executable bit"],
    );
    let out = env.isolate(&repo, ["run", "--worktree", "--", "./not-exec.sh"]);
    assert_status(&out, 126);
    assert!(stderr(&out).contains("cannot execute"), "{}", stderr(&out));
    let out = env.isolate(&repo, ["run", "--worktree", "--frobnicate", "--", "true"]);
    assert_status(&out, 125);
    // Nothing of the failed starts is left: no worktree, no branch, no record.
    assert!(env.worktree_dirs().is_empty());
    assert!(env.isolate_branches(&repo).is_empty());
    assert_eq!(env.records().len(), 5, "one record per job that ran");
}

#[test]
fn sigterm_to_isolate_stops_the_job_tree_and_records_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = env.path().join("report.json");
    let child = env
        .isolate_cmd(
            &repo,
            [
                "run",
                "--worktree",
                "--report",
                report.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                "echo $$ > $TMPDIR/pid; sleep 60 & wait",
            ],
        )
        .spawn()
        .unwrap();
    let state = env.state.clone();
    let pid_path = || {
        fs::read_dir(state.join("jobs"))
            .ok()?
            .flatten()
            .map(|e| e.path().join("tmp/pid"))
            .find(|p| p.exists())
    };
    assert!(wait_until(Duration::from_secs(20), || pid_path()
        .is_some_and(
            |p| fs::read_to_string(p).is_ok_and(|s| s.ends_with('\n'))
        )));
    let job_pid: i32 = fs::read_to_string(pid_path().unwrap())
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) on the isolate process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = finish(child, LIMIT);
    assert_status(&out, 143);
    assert!(!alive(job_pid));
    let value = env.report(&report);
    assert_eq!(value["state"], "killed");
    assert_eq!(value["worktree"]["removed"], true);
}

#[test]
fn a_setsid_daemon_left_behind_does_not_survive_the_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // The daemon's pid goes to stdout: the job may not write outside its worktree.
    let (out, _) = job(
        &env,
        &repo,
        &["--grace", "2s"],
        "setsid sh -c 'trap \"\" TERM; echo $$; exec sleep 300' & sleep 0.5",
    );
    assert_status(&out, 0);
    let pid: i32 = stdout(&out).trim().parse().expect("daemon pid");
    assert!(!alive(pid), "daemon {pid} survived its job");
}

#[test]
fn a_non_repository_and_a_repository_without_commits_fail_with_125_and_leave_nothing() {
    let env = TestEnv::new();
    let plain = env.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let out = env.isolate(&plain, ["run", "--worktree", "--", "true"]);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("not a git repository"),
        "{}",
        stderr(&out)
    );

    let empty = env.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    env.git(&empty, ["init", "-q"]);
    let out = env.isolate(&empty, ["run", "--worktree", "--", "true"]);
    assert_status(&out, 125);
    assert!(stderr(&out).contains("first commit"), "{}", stderr(&out));
    assert!(env.worktree_dirs().is_empty());
    assert!(env.records().is_empty());
    assert!(env.branches(&empty).is_empty());
}

#[test]
fn a_subdirectory_cwd_maps_into_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = job(&env, &repo.join("src"), &["--keep"], "pwd; cat lib.txt");
    assert_status(&out, 0);
    let wt = wt_path(&report);
    assert_eq!(
        stdout(&out),
        format!("{}\nlibrary\n", wt.join("src").display())
    );
}

#[test]
fn what_cmd_gets() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = "echo \"job=$ISOLATE_JOB\"; echo \"wt=$ISOLATE_WORKTREE\"; echo \"branch=$ISOLATE_BRANCH\"; \
                  echo \"base=$ISOLATE_BASE\"; echo \"repo=$ISOLATE_REPO\"; echo \"tmp=$TMPDIR\"; \
                  echo \"gc=$(git config gc.auto) maint=$(git config maintenance.auto)\"; \
                  echo \"ssh=${SSH_AUTH_SOCK:-unset}\"; echo \"extra=$EXTRA\"; \
                  touch \"$TMPDIR/scratch\" && echo tmp-writable; ls /proc/self/fd | sort -n | tr '\\n' ' '";
    let mut cmd = env.isolate_cmd(
        &repo,
        [
            "run",
            "--worktree",
            "--keep",
            "--env",
            "EXTRA=a=b",
            "--json",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    cmd.env("SSH_AUTH_SOCK", "/tmp/agent.sock");
    let out = finish(cmd.spawn().unwrap(), LIMIT);
    assert_status(&out, 0);
    let text = stdout(&out);
    let line = |key: &str| -> String {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("{key} missing in {text}"))
            .to_string()
    };
    let job = line("job");
    assert_eq!(line("branch"), format!("isolate/{job}"));
    assert_eq!(line("base"), env.git(&repo, ["rev-parse", "HEAD"]));
    assert_eq!(PathBuf::from(line("repo")), repo);
    assert!(line("wt").ends_with(&job));
    assert!(line("tmp").contains(&job));
    assert!(
        !PathBuf::from(line("tmp")).exists(),
        "TMPDIR not removed at the end"
    );
    assert_eq!(line("gc"), "0 maint=false");
    assert_eq!(line("ssh"), "unset");
    assert_eq!(line("extra"), "a=b");
    assert!(text.contains("tmp-writable"));
    // 0, 1, 2 and the descriptor ls itself opens for /proc/self/fd.
    let fds: Vec<&str> = text.lines().last().unwrap().split_whitespace().collect();
    assert!(
        fds.len() <= 4 && fds[..3] == ["0", "1", "2"],
        "descriptors: {fds:?}"
    );
    // --json: one line at start, the final report at the end, both on stderr.
    let lines: Vec<serde_json::Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["state"], "running");
    assert_eq!(lines[1]["state"], "exited");
    // The job's directory is its worktree's path, exactly (no trailing slash).
    assert_eq!(lines[1]["cwd"], lines[1]["worktree"]["path"]);

    // The start line comes before anything CMD prints, on the same stream, every time.
    for _ in 0..20 {
        let out = env.isolate(&repo, ["run", "--json", "--", "sh", "-c", "echo early >&2"]);
        assert_status(&out, 0);
        let err = stderr(&out);
        let mut lines = err.lines();
        let first: serde_json::Value = serde_json::from_str(lines.next().unwrap_or_default())
            .unwrap_or_else(|_| panic!("the start line is not first: {err}"));
        assert_eq!(first["state"], "running", "{err}");
        assert!(first["pid"].is_u64(), "{err}");
        assert_eq!(lines.next(), Some("early"), "{err}");
    }
}

#[test]
fn worktreeinclude_copies_ignored_matching_files_only() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(
        repo.join(".gitignore"),
        "target/\n.env\nconfig/local.toml\nsecret.key\nlink\n",
    )
    .unwrap();
    fs::write(
        repo.join(".worktreeinclude"),
        ".env\nconfig/\nREADME\nlink\n../outside\n",
    )
    .unwrap();
    env.git(&repo, ["add", "."]);
    env.git(&repo, ["commit", "-q", "-m", "include"]);
    fs::write(repo.join(".env"), "TOKEN=1\n").unwrap();
    fs::set_permissions(
        repo.join(".env"),
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    fs::create_dir_all(repo.join("config")).unwrap();
    fs::write(repo.join("config/local.toml"), "x = 1\n").unwrap();
    fs::write(repo.join("secret.key"), "not listed\n").unwrap();
    fs::write(repo.join("README"), "modified tracked\n").unwrap();
    fs::write(env.path().join("outside"), "outside\n").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", repo.join("link")).unwrap();
    let (out, report) = job(
        &env,
        &repo,
        &["--keep"],
        "cat .env config/local.toml README; stat -c %a .env; test -e secret.key || echo no-secret; \
         readlink link; test -e ../outside || echo no-outside",
    );
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        "TOKEN=1\nx = 1\nhello\n600\nno-secret\n/etc/hostname\nno-outside\n"
    );
    assert!(wt_path(&report).is_dir());
}

#[test]
fn a_dirty_project_checkout_is_reported() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("README"), "uncommitted\n").unwrap();
    let (out, report) = job(&env, &repo, &[], "cat README");
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "hello\n");
    assert!(
        stderr(&out).contains("uncommitted changes"),
        "{}",
        stderr(&out)
    );
    assert_eq!(report["worktree"]["dispatch_dirty"], true);
}

#[test]
fn a_job_started_in_a_linked_worktree_uses_the_project() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let linked = env.path().join("linked");
    env.git(
        &repo,
        [
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            linked.to_str().unwrap(),
        ],
    );
    let (out, report) = job(
        &env,
        &linked,
        &[],
        "git commit -q --allow-empty -m from-linked",
    );
    assert_status(&out, 0);
    assert_eq!(
        PathBuf::from(report["worktree"]["repo"].as_str().unwrap()),
        repo
    );
    assert_eq!(env.isolate_branches(&repo).len(), 1);
}

#[test]
fn without_worktree_cmd_runs_in_place_and_writes_only_tmpdir_and_allowed_paths() {
    let env = TestEnv::new();
    let dir = env.path().join("work");
    let allowed = env.path().join("allowed");
    fs::create_dir_all(&dir).unwrap();
    fs::create_dir_all(&allowed).unwrap();
    let script = format!(
        "pwd; touch here 2>/dev/null || echo cwd-denied; touch $TMPDIR/t && echo tmp-ok; touch {}/a && echo allowed-ok",
        allowed.display()
    );
    let out = env.isolate(
        &dir,
        [
            "run",
            "--allow-write",
            allowed.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert_status(&out, 0);
    assert_eq!(
        stdout(&out),
        format!("{}\ncwd-denied\ntmp-ok\nallowed-ok\n", dir.display())
    );
    assert!(!dir.join("here").exists());
    assert!(allowed.join("a").exists());
    let out = env.isolate(&dir, ["run", "--allow-write", "/no/such/dir", "--", "true"]);
    assert_status(&out, 125);
}

#[test]
fn sigint_and_sighup_to_isolate_are_forwarded_to_the_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (sig, status) in [
        (libc::SIGINT, 130),
        (libc::SIGHUP, 129),
        (libc::SIGQUIT, 131),
    ] {
        let report = env.path().join(format!("report-{sig}.json"));
        let child = env
            .isolate_cmd(
                &repo,
                [
                    "run",
                    "--worktree",
                    "--report",
                    report.to_str().unwrap(),
                    "--",
                    "sleep",
                    "60",
                ],
            )
            .spawn()
            .unwrap();
        // Running once the record names the job's pid.
        let running = wait_until(Duration::from_secs(20), || {
            env.records()
                .iter()
                .any(|r| r["state"] == "running" && r["pid"].is_i64())
        });
        assert!(running, "the job did not start");
        // SAFETY: kill(2) on the isolate process this test started.
        unsafe { libc::kill(child.id() as i32, sig) };
        let out = finish(child, LIMIT);
        assert_status(&out, status);
        assert_eq!(env.report(&report)["exit"]["signal"], sig);
    }
}

#[test]
fn a_job_dies_with_its_supervisor() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let child = env
        .isolate_cmd(
            &repo,
            [
                "run",
                "--worktree",
                "--",
                "sh",
                "-c",
                "echo $$; exec sleep 60",
            ],
        )
        .spawn()
        .unwrap();
    let supervisor = child.id() as i32;
    let mut pid = 0;
    let started = wait_until(Duration::from_secs(20), || {
        env.records().iter().any(|r| {
            pid = r["pid"].as_i64().unwrap_or(0) as i32;
            pid > 0
        })
    });
    assert!(started, "the job did not start");
    assert!(alive(pid));
    // SAFETY: kill(2) on the isolate process this test started.
    unsafe { libc::kill(supervisor, libc::SIGKILL) };
    let _ = finish(child, LIMIT);
    assert!(
        wait_until(Duration::from_secs(10), || !alive(pid)),
        "job {pid} outlived its supervisor"
    );
}

#[test]
fn a_job_cannot_start_inside_another_jobs_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = job(&env, &repo, &["--keep"], "true");
    assert_status(&out, 0);
    let wt = wt_path(&report);
    let out = env.isolate(&wt, ["run", "--worktree", "--", "true"]);
    assert_status(&out, 125);
    assert!(stderr(&out).contains("--resume"), "{}", stderr(&out));
    assert_eq!(env.worktree_dirs().len(), 1);
}
