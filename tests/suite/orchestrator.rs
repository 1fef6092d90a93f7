//! isolate driven by a program that fans a task out to several agents: `wait` for many with JSON
//! lines and a timeout, `merge --all --keep-going` past a conflict with every job in its JSON, and
//! `ps`, `worktrees` and `prune` speaking of the project they run in, every row naming its project.

use std::fs;
use std::path::Path;

use crate::support::*;

/// A background job in `repo` running `script` in a fresh worktree; its id.
fn start(env: &TestEnv, repo: &Path, script: &str) -> String {
    let out = env.isolate(
        repo,
        ["run", "--bg", "--worktree", "--", "sh", "-c", script],
    );
    assert_status(&out, 0);
    stdout(&out).trim().to_string()
}

fn lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn wait_takes_many_jobs_prints_each_as_it_ends_and_gives_up_at_its_timeout() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let quick = start(&env, &repo, "exit 0");
    let failing = start(&env, &repo, "exit 3");
    let slow = start(&env, &repo, "sleep 600");
    // The two that end: a JSON line each, their records; one failed, so 1.
    let out = env.isolate(env.path(), ["wait", "--json", &quick, &failing]);
    assert_status(&out, 1);
    let ended = lines(&out);
    assert_eq!(ended.len(), 2, "{}", stdout(&out));
    let mut ids: Vec<&str> = ended.iter().map(|r| r["id"].as_str().unwrap()).collect();
    ids.sort();
    let mut want = vec![quick.as_str(), failing.as_str()];
    want.sort();
    assert_eq!(ids, want);
    assert!(ended.iter().all(|r| r["state"] == "exited"));
    // One job alone: its own status.
    assert_status(&env.isolate(env.path(), ["wait", &failing]), 3);
    // The slow one: given up after the timeout (124), still running, and said so.
    let out = env.isolate(env.path(), ["wait", "--json", "--timeout", "1s", &slow]);
    assert_status(&out, 124);
    assert_eq!(lines(&out)[0]["state"], "running");
    // --all: the project's running jobs (the slow one), here until it is stopped.
    let out = env.isolate(&repo, ["wait", "--all", "--timeout", "1s"]);
    assert_status(&out, 124);
    assert!(stderr(&out).contains(&slow), "{}", stderr(&out));
    assert_status(&env.isolate(env.path(), ["stop", &slow]), 0);
    let out = env.isolate(&repo, ["wait", "--all", "--json"]);
    assert_status(&out, 0);
    // Outside a project --all has nothing to speak of: a usage error.
    let out = env.isolate(env.path(), ["wait", "--all"]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains("run it in a project"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn merge_all_keep_going_merges_past_a_conflict_and_lists_every_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("shared.txt"), "one\n").unwrap();
    env.git(&repo, ["add", "shared.txt"]);
    env.git(&repo, ["commit", "-q", "-m", "shared"]);
    let first = start(
        &env,
        &repo,
        "echo first > shared.txt && git commit -q -am first",
    );
    assert_status(&env.isolate(env.path(), ["wait", &first]), 0);
    let second = start(
        &env,
        &repo,
        "echo second > shared.txt && git commit -q -am second",
    );
    assert_status(&env.isolate(env.path(), ["wait", &second]), 0);
    let third = start(
        &env,
        &repo,
        "echo third > third.txt && git add third.txt && git commit -q -m third",
    );
    assert_status(&env.isolate(env.path(), ["wait", &third]), 0);
    let running = start(&env, &repo, "sleep 600");
    let out = env.isolate(&repo, ["merge", "--all", "--keep-going", "--yes", "--json"]);
    assert_status(&out, 1);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let outcome = |id: &str| {
        summary["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == id)
            .unwrap_or_else(|| panic!("{id} missing: {summary}"))
            .clone()
    };
    assert_eq!(outcome(&first)["outcome"], "merged", "{summary}");
    let conflict = outcome(&second);
    assert_eq!(conflict["outcome"], "conflicted", "{summary}");
    let resolve = conflict["resolve"].as_str().unwrap();
    assert!(
        resolve.contains(&format!("isolate run --resume {second}")),
        "{resolve}"
    );
    assert!(
        resolve.contains(&format!("isolate merge {second}")),
        "{resolve}"
    );
    // Past the conflict, the next clean job was merged; the running one listed, not merged.
    assert_eq!(outcome(&third)["outcome"], "merged", "{summary}");
    assert_eq!(outcome(&running)["outcome"], "running", "{summary}");
    for id in [&first, &second, &third, &running] {
        assert_eq!(
            outcome(id)["project"],
            repo.canonicalize().unwrap().display().to_string()
        );
    }
    // Never half-merged: the project's checkout is clean, both merges whole.
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    assert_eq!(
        fs::read_to_string(repo.join("shared.txt")).unwrap(),
        "first\n"
    );
    assert!(repo.join("third.txt").exists());
    env.assert_fsck(&repo);
    // Without --keep-going the conflict stops the run: what follows is not tried.
    assert_status(&env.isolate(env.path(), ["stop", &running]), 0);
}

#[test]
fn ps_worktrees_and_prune_speak_of_the_project_they_run_in() {
    let env = TestEnv::new();
    let one = env.repo("one");
    let two = env.repo("two");
    let a = start(&env, &one, "echo a > a && git add a && git commit -q -m a");
    let b = start(
        &env,
        &two,
        "echo b > b && git add b && git commit -q -m b; echo left > untracked",
    );
    for id in [&a, &b] {
        env.isolate(env.path(), ["wait", id]);
    }
    let ps = |dir: &Path, extra: &[&str]| {
        let mut args = vec!["ps", "--all", "--json"];
        args.extend_from_slice(extra);
        let out = env.isolate(dir, &args);
        assert_status(&out, 0);
        let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
        rows
    };
    let rows = ps(&one, &[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["id"], a.as_str());
    assert_eq!(
        rows[0]["project"],
        one.canonicalize().unwrap().display().to_string()
    );
    let rows = ps(&one, &["--all-projects"]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    // Outside any project: every project's.
    assert_eq!(ps(env.path(), &[]).len(), 2);
    // worktrees in project two shows its kept worktree with its repo; project one's shows none.
    let out = env.isolate(&two, ["worktrees", "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        rows[0]["repo"],
        two.canonicalize().unwrap().display().to_string()
    );
    let out = env.isolate(&one, ["worktrees", "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(rows.is_empty(), "{rows:?}");
    // prune in project one leaves project two's kept worktree out of it; every row names a repo.
    let out = env.isolate(&two, ["prune", "--dry-run", "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        rows.iter()
            .all(|r| r["repo"] == two.canonicalize().unwrap().display().to_string()),
        "{rows:?}"
    );
    assert!(rows.iter().any(|r| r["id"] == b.as_str()), "{rows:?}");
    let out = env.isolate(&one, ["prune", "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(rows.iter().all(|r| r["id"] != b.as_str()), "{rows:?}");
    assert!(env.worktree_dirs().iter().any(|d| d.ends_with(&b)));
}

/// A job that takes `mib` MiB, 1 MiB at a time, and says so.
const GREEDY: &str = "python3 -c '\n\
a = []\n\
for i in range(400):\n\
\x20   a.append(bytearray(1 << 20))\n\
print(\"survived\")\n\
'";

#[test]
fn limits_per_job_hold_the_whole_tree_and_a_job_out_of_memory_says_so() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = env.path().join("oom.json");
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--memory",
            "96M",
            "--report",
            report.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            GREEDY,
        ],
    );
    assert_status(&out, 137);
    assert!(!stdout(&out).contains("survived"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("limits: memory 96 MiB"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("out of memory, its limit 96 MiB"),
        "{}",
        stderr(&out)
    );
    let record = env.report(&report);
    assert_eq!(record["state"], "out_of_memory", "{record}");
    assert_eq!(record["limits"]["memory"], 96 << 20);
    // Within the limit the same job runs to its end; without one too.
    let out = env.isolate(&repo, ["run", "--memory", "1G", "--", "sh", "-c", GREEDY]);
    assert_status(&out, 0);
    assert!(stdout(&out).contains("survived"));
    // Processes: the tree's, not the user's; a fork past the limit fails, the job goes on.
    let out = env.isolate(
        &repo,
        [
            "run",
            "--pids",
            "20",
            "--",
            "python3",
            "-c",
            "import os, time\nn = 0\nfor i in range(40):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30); os._exit(0)\n    n += 1\nprint('forked', n)",
        ],
    );
    assert_status(&out, 0);
    let forked: usize = stdout(&out)
        .trim()
        .strip_prefix("forked ")
        .unwrap()
        .parse()
        .unwrap();
    assert!((10..20).contains(&forked), "{}", stdout(&out));
    // A policy's [limits] asks for them too; bad values are refused before anything runs.
    let policy = env.file(
        "limited.toml",
        "extends = \"default\"\n[limits]\nmemory = \"96M\"\n",
    );
    let out = env.isolate(
        &repo,
        [
            "run",
            "--policy",
            policy.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            GREEDY,
        ],
    );
    assert_status(&out, 137);
    for bad in [["--memory", "lots"], ["--cpus", "0"], ["--pids", "0"]] {
        let mut args = vec!["run"];
        args.extend(bad);
        args.extend(["--", "true"]);
        let out = env.isolate(&repo, &args);
        // run's own usage errors are 125, as its other failures before CMD runs.
        assert_status(&out, 125);
    }
}

#[test]
fn a_limit_that_cannot_be_had_fails_the_run_and_never_runs_unlimited() {
    // An ordinary user whose cgroup no controller reaches (no delegated subtree here): 125, and
    // the command never ran.
    let env = TestEnv::new();
    let out = env.as_ordinary_user(
        "git init -q lim && cd lim && git -c user.name=u -c user.email=u@x commit -q --allow-empty -m i && \
         \"$ISOLATE\" run --memory 64M -- sh -c 'echo ran'; echo \"status $?\"",
    );
    let text = stdout(&out);
    if text.contains("status 0") {
        // This machine delegates a controller to ordinary users: the limit held instead.
        return;
    }
    assert!(text.contains("status 125"), "{text}{}", stderr(&out));
    assert!(!text.contains("ran\n"), "{text}");
    assert!(
        stderr(&out).contains("cannot limit the job"),
        "{}",
        stderr(&out)
    );
}
