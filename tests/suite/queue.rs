//! The queue of background jobs (`max_running`): jobs beyond it wait `queued`, start in the order
//! they came as others end, from the base they were given; `wait`, `stop` and `rm` work on them;
//! jobs submitted at once never run more than the limit.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

/// How long a job may take to start, or to end once released.
const TURN: Duration = Duration::from_secs(60);

/// A test environment whose user configuration sets `max_running`.
fn queue_env(max: usize) -> TestEnv {
    let env = TestEnv::new();
    let config = env.home.join(".config/isolate");
    fs::create_dir_all(&config).unwrap();
    fs::write(config.join("config.toml"), format!("max_running = {max}\n")).unwrap();
    env
}

/// A job that runs until `gate` exists.
fn held_by(gate: &Path) -> String {
    format!("while [ ! -e '{}' ]; do sleep 0.05; done", gate.display())
}

/// `isolate run --bg --json EXTRA -- sh -c SCRIPT` in `dir`, bounded.
fn submit_cmd(env: &TestEnv, dir: &Path, extra: &[&str], script: &str) -> std::process::Child {
    let mut args = vec!["run", "--bg", "--json"];
    args.extend_from_slice(extra);
    args.extend(["--", "sh", "-c", script]);
    env.isolate_cmd(dir, &args)
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// The record `run --bg --json` printed.
fn printed(out: &Output) -> Value {
    assert_status(out, 0);
    serde_json::from_str(stdout(out).trim()).unwrap()
}

/// Every job on record, by `ps --all --json` (from outside any project: every project's).
fn jobs(env: &TestEnv) -> Vec<Value> {
    let out = env.isolate(env.path(), ["ps", "--all", "--json"]);
    assert_status(&out, 0);
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn state_of(jobs: &[Value], id: &str) -> String {
    jobs.iter()
        .find(|j| j["id"] == id)
        .map(|j| j["state"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

fn count(jobs: &[Value], state: &str) -> usize {
    jobs.iter().filter(|j| j["state"] == state).count()
}

/// Polls `ps` until `done` says so of the jobs (asserting at every look that no more than `max`
/// run); the jobs as last seen.
fn watch_until(env: &TestEnv, max: usize, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    let ok = wait_until(TURN, || {
        seen = jobs(env);
        let running = count(&seen, "running");
        assert!(running <= max, "{running} jobs run at once: {seen:#?}");
        done(&seen)
    });
    assert!(ok, "the queue never got there: {seen:#?}");
    seen
}

#[test]
fn jobs_beyond_max_running_wait_and_start_in_order_from_their_base() {
    let env = queue_env(2);
    let repo = env.repo("app");
    let base = env.git(&repo, ["rev-parse", "HEAD"]);
    let gates: Vec<PathBuf> = (0..5).map(|k| env.path().join(format!("go-{k}"))).collect();
    // Five at once.
    let children: Vec<_> = gates
        .iter()
        .map(|gate| submit_cmd(&env, &repo, &["--worktree"], &held_by(gate)))
        .collect();
    let submitted: Vec<Value> = thread::scope(|s| {
        let handles: Vec<_> = children
            .into_iter()
            .map(|c| s.spawn(move || printed(&finish(c, LIMIT))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let gate_of = |record: &Value| -> PathBuf {
        let script = record["command"][2].as_str().unwrap();
        gates
            .iter()
            .find(|g| script.contains(g.to_str().unwrap()))
            .unwrap()
            .clone()
    };
    let (running, mut queued): (Vec<&Value>, Vec<&Value>) =
        submitted.iter().partition(|r| r["state"] == "running");
    assert_eq!(running.len(), 2, "{submitted:#?}");
    assert_eq!(queued.len(), 3, "{submitted:#?}");
    // The order they came in.
    queued.sort_by_key(|r| r["queued_at"].as_str().unwrap().to_string());
    let now = jobs(&env);
    assert_eq!(count(&now, "running"), 2, "{now:#?}");
    assert_eq!(count(&now, "queued"), 3, "{now:#?}");
    assert!(
        env.worktree_dirs().len() == 2,
        "a queued job has a worktree: {:?}",
        env.worktree_dirs()
    );
    // The project moves on: the queued jobs start from what the caller had.
    fs::write(repo.join("later.txt"), "later\n").unwrap();
    env.git(&repo, ["add", "later.txt"]);
    env.git(&repo, ["commit", "-q", "-m", "later"]);
    // `wait` on a job while it is queued waits through to its end.
    let last = queued[2]["id"].as_str().unwrap().to_string();
    let waiter = env
        .isolate_cmd(env.path(), ["wait", &last])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Each job released in turn: the oldest queued job takes the slot, the others wait on.
    let mut holding: Vec<&Value> = running.clone();
    for (n, next) in queued.iter().enumerate() {
        let done = holding.remove(0);
        fs::write(gate_of(done), "").unwrap();
        let next_id = next["id"].as_str().unwrap();
        let seen = watch_until(&env, 2, |jobs| state_of(jobs, next_id) == "running");
        for later in &queued[n + 1..] {
            assert_eq!(
                state_of(&seen, later["id"].as_str().unwrap()),
                "queued",
                "a younger job started first: {seen:#?}"
            );
        }
        holding.push(next);
    }
    for job in &holding {
        fs::write(gate_of(job), "").unwrap();
    }
    assert_status(&finish(waiter, LIMIT), 0);
    let ended = watch_until(&env, 2, |jobs| jobs.iter().all(|j| j["state"] == "exited"));
    assert_eq!(ended.len(), 5);
    for job in &ended {
        assert_eq!(job["exit"]["code"], 0, "{job:#}");
        assert_eq!(job["worktree"]["base"], base.as_str(), "{job:#}");
    }
    for job in &queued {
        let id = job["id"].as_str().unwrap();
        let record = ended.iter().find(|j| j["id"] == id).unwrap();
        assert!(record["queued_at"].is_string(), "{record:#}");
    }
}

#[test]
fn stop_ends_a_queued_job_without_making_its_worktree() {
    let env = queue_env(1);
    let repo = env.repo("app");
    let gate = env.path().join("go");
    let first = printed(&finish(
        submit_cmd(&env, &repo, &["--worktree"], &held_by(&gate)),
        LIMIT,
    ));
    assert_eq!(first["state"], "running");
    let queued = printed(&finish(
        submit_cmd(&env, &repo, &["--worktree"], "echo never"),
        LIMIT,
    ));
    assert_eq!(queued["state"], "queued");
    let id = queued["id"].as_str().unwrap();
    let listed = env.isolate(&repo, ["ps"]);
    assert!(
        stdout(&listed)
            .lines()
            .any(|l| l.starts_with(id) && l.contains(" queued ")),
        "{}",
        stdout(&listed)
    );
    // Not removed while it waits.
    assert_status(&env.isolate(env.path(), ["rm", id]), 1);
    assert_status(&env.isolate(env.path(), ["stop", id]), 0);
    let out = env.isolate(env.path(), ["status", id, "--json"]);
    assert_status(&out, 0);
    let record: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(record["state"], "killed", "{record:#}");
    assert_eq!(record["exit"]["signal"], libc::SIGTERM);
    assert_eq!(record["never_ran"], "stopped while queued");
    assert!(record["worktree"].is_null() && record["pid"].is_null());
    assert_status(&env.isolate(env.path(), ["wait", id]), 128 + libc::SIGTERM);
    let branch = format!("isolate/{id}");
    assert!(!env.isolate_branches(&repo).contains(&branch));
    assert!(env.worktree_dirs().iter().all(|d| !d.ends_with(id)));
    // The running job is untouched, and ends as it would have.
    let first_id = first["id"].as_str().unwrap();
    assert_eq!(state_of(&jobs(&env), first_id), "running");
    fs::write(&gate, "").unwrap();
    assert_status(&env.isolate(env.path(), ["wait", first_id]), 0);
    // An ended job like any other: `rm` forgets it.
    assert_status(&env.isolate(env.path(), ["rm", id]), 0);
    assert!(jobs(&env).iter().all(|j| j["id"] != id));
}

#[test]
fn a_queued_job_that_cannot_start_when_its_turn_comes_says_why() {
    let env = queue_env(1);
    let gate = env.path().join("go");
    let first = printed(&finish(
        submit_cmd(&env, env.path(), &[], &held_by(&gate)),
        LIMIT,
    ));
    let out = env.isolate(
        env.path(),
        ["run", "--bg", "--json", "--", "no-such-command-anywhere"],
    );
    let queued = printed(&out);
    assert_eq!(queued["state"], "queued");
    let id = queued["id"].as_str().unwrap();
    fs::write(&gate, "").unwrap();
    assert_status(
        &env.isolate(env.path(), ["wait", first["id"].as_str().unwrap()]),
        0,
    );
    assert_status(&env.isolate(env.path(), ["wait", id]), 127);
    let out = env.isolate(env.path(), ["status", id, "--json"]);
    let record: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(record["state"], "failed", "{record:#}");
    assert_eq!(record["exit"]["code"], 127);
    assert!(
        record["never_ran"].as_str().unwrap().contains("not found"),
        "{record:#}"
    );
    let log = fs::read_to_string(env.state.join("jobs").join(id).join("supervisor.log")).unwrap();
    assert!(log.contains("never ran"), "{log}");
}

#[test]
fn twenty_jobs_submitted_at_once_never_run_beyond_max_running() {
    let max = 3;
    let env = queue_env(max);
    // Each job waits for the gate, then notes when its command started and ended (nanoseconds),
    // in a directory it may write.
    let gate = env.path().join("go");
    let marks = env.path().join("marks");
    fs::create_dir(&marks).unwrap();
    let script = format!(
        "{}; s=$(date +%s%N); sleep 0.2; echo \"$s $(date +%s%N)\" > '{}'/\"$ISOLATE_JOB\"",
        held_by(&gate),
        marks.display()
    );
    let allow = marks.to_str().unwrap();
    let children: Vec<_> = (0..20)
        .map(|_| submit_cmd(&env, env.path(), &["--allow-write", allow], &script))
        .collect();
    let submitted: Vec<Value> = thread::scope(|s| {
        let handles: Vec<_> = children
            .into_iter()
            .map(|c| s.spawn(move || printed(&finish(c, LIMIT))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let queued = submitted.iter().filter(|r| r["state"] == "queued").count();
    assert_eq!(queued, 20 - max, "{submitted:#?}");
    fs::write(&gate, "").unwrap();
    let ids: Vec<String> = submitted
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect();
    let mut args = vec!["wait", "--timeout", "300s"];
    args.extend(ids.iter().map(String::as_str));
    assert_status(&env.isolate(env.path(), &args), 0);
    let mut events: Vec<(u128, i32)> = Vec::new();
    for id in &ids {
        let text = fs::read_to_string(marks.join(id)).unwrap();
        let (start, end) = text.trim().split_once(' ').unwrap();
        events.push((start.parse().unwrap(), 1));
        events.push((end.parse().unwrap(), -1));
    }
    // Ends before starts at the same instant.
    events.sort();
    let mut now = 0;
    let mut most = 0;
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    assert!(most <= max as i32, "{most} jobs ran at once");
}
