//! Faults: a supervisor killed with SIGKILL at each stage, a full disk, a project that moves or
//! disappears under a job, stale locks, and load. Afterwards nothing is lost and nothing half-made
//! is left unexplained: a killed job reads as `lost`, `prune` settles it, and its worktree is kept.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::Duration;

use crate::support::mount::small_tmpfs;
use crate::support::*;

/// The processes whose parent is `pid`, with their command lines.
fn children(pid: i32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        if after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<i32>().ok())
            == Some(pid)
        {
            let cmdline = fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            out.push((child, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    out
}

/// Output discarded: after a supervisor is killed, what it left behind may hold its pipes open.
fn quiet(mut cmd: Command) -> Command {
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    cmd
}

fn kill9(pid: i32) {
    // SAFETY: kill(2) on a process this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

fn state_of(env: &TestEnv, id: &str) -> String {
    let out = env.isolate(env.path(), ["status", "--json", id]);
    let value: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    value["state"].as_str().unwrap().to_string()
}

fn only_record(env: &TestEnv) -> serde_json::Value {
    let records = env.records();
    assert_eq!(records.len(), 1, "{records:?}");
    records.into_iter().next().unwrap()
}

fn prune_json(env: &TestEnv) -> Vec<serde_json::Value> {
    let out = env.isolate(env.path(), ["prune", "--json"]);
    assert_status(&out, 0);
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn a_supervisor_killed_while_the_setup_runs_leaves_an_explained_lost_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(
        repo.join(".isolate.toml"),
        "setup = \"touch setup-started; sleep 300\"\n",
    )
    .unwrap();
    env.git(&repo, ["add", ".isolate.toml"]);
    env.git(&repo, ["commit", "-q", "-m", "slow setup"]);
    let child = quiet(env.isolate_cmd(&repo, ["run", "--worktree", "--", "true"]))
        .spawn()
        .unwrap();
    let supervisor = child.id() as i32;
    assert!(wait_until(Duration::from_secs(30), || env
        .worktree_dirs()
        .iter()
        .any(|d| d.join("setup-started").exists())));
    let sleeper = wait_for_descendant(supervisor, "sleep 300", |c| c.starts_with("sleep 300"));
    kill9(supervisor);
    let _ = finish(child, LIMIT);
    let record = only_record(&env);
    let id = record["id"].as_str().unwrap().to_string();
    assert_eq!(state_of(&env, &id), "lost");
    let outcomes = prune_json(&env);
    assert!(
        outcomes
            .iter()
            .any(|o| o["id"] == id.as_str() && o["action"] == "kept"),
        "{outcomes:?}"
    );
    assert!(
        wait_until(Duration::from_secs(10), || !alive(sleeper)),
        "prune left the setup's process alive"
    );
    let wt = PathBuf::from(record["worktree"]["path"].as_str().unwrap());
    assert!(
        wt.join("setup-started").exists(),
        "the lost job's worktree was touched"
    );
    env.assert_fsck(&repo);
}

/// The first descendant of `root` whose command line matches `wanted`, looked for as long as any
/// one command may take (a job writing and committing 150 MB on a loaded 2-core machine took more
/// than the 30 s this once waited).
fn wait_for_descendant(root: i32, needle: &str, wanted: impl Fn(&str) -> bool) -> i32 {
    let mut found = 0;
    let ok = wait_until(LIMIT, || {
        let mut queue = vec![root];
        while let Some(pid) = queue.pop() {
            for (child, cmdline) in children(pid) {
                if wanted(&cmdline) {
                    found = child;
                    return true;
                }
                queue.push(child);
            }
        }
        false
    });
    assert!(ok, "no descendant of {root} runs {needle:?}");
    found
}

#[test]
fn a_foreground_supervisor_killed_while_running_is_settled_by_prune() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let child = quiet(env.isolate_cmd(
        &repo,
        [
            "run",
            "--worktree",
            "--",
            "sh",
            "-c",
            "echo work > work.txt; sleep 300 & sleep 300",
        ],
    ))
    .spawn()
    .unwrap();
    let supervisor = child.id() as i32;
    let orphan = wait_for_descendant(supervisor, "sleep 300", |c| c.starts_with("sleep 300"));
    kill9(supervisor);
    let _ = finish(child, LIMIT);
    let record = only_record(&env);
    let id = record["id"].as_str().unwrap();
    assert_eq!(state_of(&env, id), "lost");
    prune_json(&env);
    assert!(
        wait_until(Duration::from_secs(10), || !alive(orphan)),
        "the job's processes outlived prune"
    );
    let settled = only_record(&env);
    assert_eq!(settled["state"], "lost");
    assert!(
        settled["worktree"]["reason"]
            .as_str()
            .unwrap()
            .contains("lost"),
        "{settled}"
    );
    let wt = PathBuf::from(settled["worktree"]["path"].as_str().unwrap());
    assert_eq!(fs::read_to_string(wt.join("work.txt")).unwrap(), "work\n");
}

#[test]
fn a_supervisor_killed_during_the_import_loses_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // A large commit, so that the import (pack-objects | index-pack) takes a moment.
    let script =
        "head -c 150000000 /dev/urandom > big.bin && git add big.bin && git commit -q -m big";
    let child = quiet(env.isolate_cmd(&repo, ["run", "--worktree", "--", "sh", "-c", script]))
        .spawn()
        .unwrap();
    let supervisor = child.id() as i32;
    wait_for_descendant(supervisor, "git pack-objects", |c| {
        c.starts_with("git ") && c.contains(" pack-objects ")
    });
    kill9(supervisor);
    let _ = finish(child, LIMIT);
    // Wait for the orphaned git processes to finish or die before looking at the project.
    thread::sleep(Duration::from_millis(500));
    env.assert_fsck(&repo);
    let record = only_record(&env);
    let id = record["id"].as_str().unwrap().to_string();
    assert_eq!(state_of(&env, &id), "lost");
    let wt = PathBuf::from(record["worktree"]["path"].as_str().unwrap());
    assert!(wt.join("big.bin").exists(), "the worktree was touched");
    // Nothing lost: the commit can still be brought home.
    assert_status(&env.isolate(&repo, ["import", &id]), 0);
    assert_eq!(
        env.git(
            &repo,
            ["log", "-1", "--format=%s", &format!("isolate/{id}")]
        ),
        "big"
    );
    env.assert_fsck(&repo);
}

/// A merge whose files would not fit the checkout's filesystem: sixty thousand files of one byte
/// are one blob of one byte but a block each, and a check of blob sizes let them fill the disk;
/// git failed part-way. Refused before anything is written, saying so.
#[test]
fn a_merge_that_would_fill_the_checkouts_filesystem_is_refused() {
    let env = TestEnv::new();
    let (small, _unmount) = small_tmpfs(&env, "16m");
    let repo = env.repo(&format!(
        "{}/app",
        small.file_name().unwrap().to_string_lossy()
    ));
    let script = "mkdir many && python3 -c 'import os\nfor i in range(6000): open(\"many/%d\" % i, \"w\").write(\"x\")' \
                  && git add many && git commit -q -m many";
    let (out, report) = env.worktree_job(&repo, &[], script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    let main = env.git(&repo, ["rev-parse", "main"]);
    let out = env.isolate(&repo, ["merge", "--yes", id]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("free"), "{}", stderr(&out));
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);
    assert!(!repo.join("many").exists());
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
}

/// A state directory whose filesystem another job fills for a moment (through its TMPDIR, which is
/// there): a background job's log could not be written, and its pump gave up, closed the pipe and
/// killed the job with SIGPIPE on its next line. The pump reads on, drops what it cannot write,
/// and once the space is back says so in the log; the job ends as it would have.
#[test]
fn a_full_state_filesystem_for_a_moment_kills_no_background_job() {
    // Needs root to mount a small tmpfs (CI runs as root).
    let env = TestEnv::new();
    let (small, _unmount) = small_tmpfs(&env, "8m");
    let state = small.display().to_string();
    let vars = [("ISOLATE_HOME", state.as_str())];
    let out = env.isolate_with(
        env.path(),
        &vars,
        &[
            "run",
            "--bg",
            "--",
            "sh",
            "-c",
            "for i in $(seq 40); do echo line $i; head -c 4096 /dev/zero | tr '\\0' x; echo; \
             sleep 0.05; done; echo fin\"\"ished",
        ],
    );
    assert_status(&out, 0);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let filled = env.isolate_with(
        env.path(),
        &vars,
        &[
            "run",
            "--",
            "sh",
            "-c",
            "head -c 16m /dev/zero > \"$TMPDIR/fill\"; sleep 0.6; rm -f \"$TMPDIR/fill\"",
        ],
    );
    assert_eq!(filled.status.code(), Some(0), "{}", stderr(&filled));
    let waited = env.isolate_with(env.path(), &vars, &["wait", &id]);
    assert_status(&waited, 0);
    let logs = env.isolate_with(env.path(), &vars, &["logs", &id]);
    let text = stdout(&logs);
    assert!(text.contains("finished"), "{text}");
    assert!(
        text.contains("could not be written"),
        "the filesystem never filled: {text}"
    );
}

/// The same, with the loss at the job's very end: no later write carries the note, so the log
/// takes it when the job's output ends.
#[test]
fn output_lost_at_a_jobs_end_is_noted_at_the_logs_end() {
    // Needs root to mount a small tmpfs (CI runs as root).
    let env = TestEnv::new();
    let (small, _unmount) = small_tmpfs(&env, "8m");
    let state = small.display().to_string();
    let vars = [("ISOLATE_HOME", state.as_str())];
    // The test and the job meet through files in the job's TMPDIR (in the state directory): the
    // job says its last line once the filesystem is full, and ends once the space is back. Its
    // first output fills the log's first page exactly, so that the last line needs a new one.
    let out = env.isolate_with(
        env.path(),
        &vars,
        &[
            "run",
            "--bg",
            "--",
            "sh",
            "-c",
            "cd \"$TMPDIR\" && touch hold unwritten && head -c 4095 /dev/zero | tr '\\0' x && echo; \
             touch wait; while [ -e wait ]; do sleep 0.05; done; echo the last li\"\"ne; rm unwritten; \
             while [ -e hold ]; do sleep 0.05; done",
        ],
    );
    assert_status(&out, 0);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let tmp = small.join("jobs").join(&id).join("tmp");
    let log = small.join("jobs").join(&id).join("output.log");
    // The first line is in the log (the pump has written it) before the filesystem fills.
    assert!(wait_until(Duration::from_secs(20), || tmp
        .join("wait")
        .exists()
        && fs::metadata(&log).is_ok_and(|m| m.len() >= 4096)));
    // Full: written until the filesystem refuses.
    let fill = small.join("fill");
    let mut file = fs::File::create(&fill).unwrap();
    let block = vec![0u8; 64 << 10];
    while std::io::Write::write_all(&mut file, &block).is_ok() {}
    fs::remove_file(tmp.join("wait")).unwrap();
    assert!(wait_until(Duration::from_secs(20), || !tmp
        .join("unwritten")
        .exists()));
    // The pump has the last line a moment after the job wrote it.
    thread::sleep(Duration::from_millis(500));
    drop(file);
    fs::remove_file(&fill).unwrap();
    fs::remove_file(tmp.join("hold")).unwrap();
    let waited = env.isolate_with(env.path(), &vars, &["wait", &id]);
    assert_status(&waited, 0);
    let text = stdout(&env.isolate_with(env.path(), &vars, &["logs", &id]));
    assert!(
        text.starts_with(&format!("{}\n", "x".repeat(4095))),
        "{text}"
    );
    assert!(
        !text.contains("the last line"),
        "the filesystem never filled: {text}"
    );
    let last = text.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("[isolate: ") && last.contains("could not be written"),
        "{text}"
    );
}

#[test]
fn a_full_disk_while_creating_the_worktree_rolls_back() {
    // Needs root to mount a small tmpfs (CI runs as root).
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("large.bin"), vec![7u8; 2 << 20]).unwrap();
    env.git(&repo, ["add", "large.bin"]);
    env.git(&repo, ["commit", "-q", "-m", "large"]);
    let (small, _unmount) = small_tmpfs(&env, "1m");
    let config = env.home.join(".config/isolate");
    fs::create_dir_all(&config).unwrap();
    fs::write(
        config.join("config.toml"),
        format!("worktree_root = \"{}\"\n", small.display()),
    )
    .unwrap();
    let out = env.isolate(&repo, ["run", "--worktree", "--", "true"]);
    assert_status(&out, 125);
    assert!(stderr(&out).contains("large.bin"), "{}", stderr(&out));
    assert!(env.records().is_empty(), "a record was left");
    assert!(env.isolate_branches(&repo).is_empty(), "a branch was left");
    assert!(
        env.git(&repo, ["for-each-ref", "refs/isolate/"]).is_empty(),
        "a pin was left"
    );
    let left: Vec<_> = fs::read_dir(&small)
        .unwrap()
        .flatten()
        .flat_map(|d| fs::read_dir(d.path()).into_iter().flatten().flatten())
        .collect();
    assert!(left.is_empty(), "a worktree was left: {left:?}");
}

#[test]
fn a_project_removed_while_the_job_runs_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let moved = env.path().join("moved-away");
    let child = env
        .isolate_cmd(&repo, ["run", "--worktree", "--", "sh", "-c", "git commit -q --allow-empty -m work && touch \"$TMPDIR/committed\"; while [ ! -e \"$TMPDIR/go\" ]; do sleep 0.05; done"])
        .spawn()
        .unwrap();
    let job_dir = || {
        fs::read_dir(env.state.join("jobs"))
            .ok()?
            .flatten()
            .next()
            .map(|e| e.path())
    };
    assert!(wait_until(Duration::from_secs(30), || job_dir()
        .is_some_and(|d| d.join("job.json").exists()
            && fs::read_to_string(d.join("job.json")).is_ok_and(|t| t
                .contains("\"pid\": 1")
                || t.contains("\"pid\": ")))));
    // The project moves only once the job has committed (a fixed wait lost that race under load).
    assert!(wait_until(Duration::from_secs(30), || job_dir()
        .is_some_and(|d| d.join("tmp/committed").exists())));
    fs::rename(&repo, &moved).unwrap();
    fs::write(job_dir().unwrap().join("tmp/go"), "").unwrap();
    let out = finish(child, LIMIT);
    assert_status(&out, 0);
    let record = only_record(&env);
    assert_eq!(record["worktree"]["removed"], false, "{record}");
    assert!(
        record["worktree"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("kept:"),
        "{record}"
    );
    let wt = PathBuf::from(record["worktree"]["path"].as_str().unwrap());
    // The job's commit is still there (read through the project's new place).
    let mut git = Command::new("git");
    env.apply(&mut git);
    let log = git
        .arg("-C")
        .arg(&wt)
        .args(["log", "-1", "--format=%s"])
        .env(
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            moved.join(".git/objects"),
        )
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout).trim(), "work");
    env.assert_fsck(&moved);
}

#[test]
fn a_stale_packed_refs_lock_in_the_project_loses_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join(".git/packed-refs.lock"), "").unwrap();
    let report = env.path().join("r.json");
    let (out, value) = env.worktree_job(&repo, &[], "git commit -q --allow-empty -m work");
    assert_status(&out, 0);
    let branch = value["worktree"]["branch"].as_str().unwrap();
    assert_eq!(env.git(&repo, ["log", "-1", "--format=%s", branch]), "work");
    assert!(
        repo.join(".git/packed-refs.lock").exists(),
        "isolate removed a lock it did not take"
    );
    // A job without commits: its branch may not be deletable past the lock; it is then kept and said.
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--report",
            report.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    assert_status(&out, 0);
    assert!(env.worktree_dirs().is_empty());
}

#[test]
fn twenty_jobs_with_a_concurrent_prune_and_ps_loop() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let stop = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|s| {
        let churn = s.spawn(|| {
            let mut rounds = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_status(&env.isolate(env.path(), ["ps", "--all", "--json"]), 0);
                assert_status(&env.isolate(env.path(), ["prune", "--json"]), 0);
                rounds += 1;
            }
            rounds
        });
        let jobs: Vec<_> = (0..20)
            .map(|i| {
                let script =
                    format!("echo {i} > job-{i}.txt && git add . && git commit -q -m 'job {i}'");
                env.isolate_cmd(
                    &repo,
                    ["run", "--worktree", "-q", "--", "sh", "-c", &script],
                )
                .spawn()
                .unwrap()
            })
            .collect();
        for job in jobs {
            assert_status(&finish(job, LIMIT), 0);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(churn.join().unwrap() > 0);
    });
    let branches = env.isolate_branches(&repo);
    assert_eq!(branches.len(), 20, "{branches:?}");
    for b in &branches {
        assert_eq!(
            env.git(&repo, ["rev-list", "--count", &format!("main..{b}")]),
            "1"
        );
    }
    for r in env.records() {
        assert_eq!(r["state"], "exited", "{r}");
        assert_eq!(r["worktree"]["commits"], 1, "{r}");
    }
    assert!(env.worktree_dirs().is_empty());
    env.assert_fsck(&repo);
    let _ = Path::new("");
}

#[test]
fn a_supervisor_killed_while_it_removes_a_clean_worktree_leaves_an_explained_lost_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // Ignored build output only: the worktree is clean and isolate removes it, which takes a while.
    let script = "python3 -c \"import os\nfor d in range(40):\n os.makedirs(f'target/d{d}')\n for f in range(1000): open(f'target/d{d}/f{f}', 'w').close()\"";
    let child = quiet(env.isolate_cmd(&repo, ["run", "--worktree", "--", "sh", "-c", script]))
        .spawn()
        .unwrap();
    let supervisor = child.id() as i32;
    let count = |dir: &Path| fs::read_dir(dir).map(|d| d.count()).unwrap_or(0);
    // Wait until the job has made its files, then until the removal has begun.
    let mut target = PathBuf::new();
    assert!(wait_until(Duration::from_secs(60), || {
        env.worktree_dirs().first().is_some_and(|wt| {
            target = wt.join("target");
            count(&target) == 40
                && fs::read_dir(target.join("d39"))
                    .map(|d| d.count())
                    .unwrap_or(0)
                    == 1000
        })
    }));
    let began = wait_until(Duration::from_secs(60), || {
        count(&target) < 40 || !target.exists()
    });
    kill9(supervisor);
    let _ = finish(child, LIMIT);
    assert!(began);
    let record = only_record(&env);
    let id = record["id"].as_str().unwrap().to_string();
    if record["state"] != "running" {
        // The removal finished before the kill landed: then it must have ended cleanly.
        eprintln!("note: the removal finished before the kill");
        assert_eq!(record["worktree"]["removed"], true, "{record}");
        return;
    }
    assert_eq!(state_of(&env, &id), "lost");
    let outcomes = prune_json(&env);
    assert!(
        outcomes
            .iter()
            .any(|o| o["id"] == id.as_str() && o["action"] == "kept"),
        "{outcomes:?}"
    );
    assert!(only_record(&env)["worktree"]["reason"]
        .as_str()
        .unwrap()
        .contains("lost"));
    env.assert_fsck(&repo);
    // The branch (no commits) is still the project's until the user forgets the job.
    assert_eq!(env.isolate_branches(&repo).len(), 1);
    assert_status(&env.isolate(env.path(), ["rm", "--force", &id]), 0);
}

#[test]
fn after_a_supervisor_is_killed_the_jobs_connects_fail_and_never_go_unchecked() {
    // A daemon of the job connects in a loop, to its own socket and to one outside; its supervisor
    // is killed with SIGKILL. The calls that needed the supervisor's answer then fail (the kernel
    // says ENOSYS once the filter's listener is gone); none of them reaches the outside socket.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let outside = std::os::unix::net::UnixListener::bind(env.path().join("outside.sock")).unwrap();
    outside.set_nonblocking(true).unwrap();
    let daemon = env.file(
        "daemon.py",
        "import errno, os, socket, sys, time\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind('own.sock'); srv.listen(4096)\n\
         srv.setblocking(False)\n\
         log = os.open('connects.log', os.O_WRONLY | os.O_CREAT | os.O_APPEND)\n\
         open('daemon.pid', 'w').write(str(os.getpid()))\n\
         def attempt(name, path):\n\
         \x20   try:\n\
         \x20       socket.socket(socket.AF_UNIX).connect(path); result = 'ok'\n\
         \x20   except OSError as e:\n\
         \x20       result = errno.errorcode.get(e.errno, str(e.errno))\n\
         \x20   os.write(log, ('%s: %s\\n' % (name, result)).encode())\n\
         while True:\n\
         \x20   attempt('own', 'own.sock'); attempt('outside', sys.argv[1])\n\
         \x20   try: srv.accept()[0].close()\n\
         \x20   except BlockingIOError: pass\n\
         \x20   time.sleep(0.02)\n",
    );
    let script = format!(
        "setsid python3 {} {} & sleep 300",
        daemon.display(),
        env.path().join("outside.sock").display()
    );
    let child = quiet(env.isolate_cmd(&repo, ["run", "--worktree", "--", "sh", "-c", &script]))
        .spawn()
        .unwrap();
    let supervisor = child.id() as i32;
    let log = || {
        env.worktree_dirs()
            .first()
            .and_then(|wt| fs::read_to_string(wt.join("connects.log")).ok())
            .unwrap_or_default()
    };
    assert!(
        wait_until(Duration::from_secs(30), || log().contains("own: ok")
            && log().contains("outside: ")),
        "the daemon's own connects did not work: {}",
        log()
    );
    assert!(log().contains("outside: EACCES"), "{}", log());
    kill9(supervisor);
    let _ = finish(child, LIMIT);
    let before = log().len();
    assert!(
        wait_until(Duration::from_secs(30), || log()[before..]
            .contains("own: ENOSYS")),
        "connects did not fail once the supervisor was gone: {}",
        &log()[before..]
    );
    let after = log()[before..].to_string();
    assert!(!after.contains(": ok"), "a connect went unchecked: {after}");
    assert!(
        matches!(outside.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "a connection reached the outside socket"
    );
    // prune settles the lost job; the daemon (in a session of its own: without a cgroup nothing
    // names it as the job's) is stopped here if prune could not.
    prune_json(&env);
    let pid: i32 = env
        .worktree_dirs()
        .first()
        .and_then(|wt| fs::read_to_string(wt.join("daemon.pid")).ok())
        .and_then(|p| p.trim().parse().ok())
        .expect("the daemon's pid");
    kill9(pid);
}

/// A lost job's main pid may lead a new session by the time it is settled (the pid reused for the
/// user's next shell). Settling it never kills that session: a live process with the recorded pid
/// is the job's only if its start time is the recorded one (and, for a record without one, it
/// cannot be told, so it is left alone). Nor a session whose leader has gone (a user's daemon
/// that forked and exited under the reused pid): nothing tells it from the job's (the review
/// found the user's daemon killed so).
#[test]
fn settling_a_lost_job_never_kills_a_session_that_reused_its_pid() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (keep_start, leader_gone) in [(true, false), (false, false), (true, true)] {
        // The decoy session's id, and the process of it that must live on.
        let (mut decoy, decoy_pid, survivor) = match leader_gone {
            false => {
                let decoy = std::process::Command::new("setsid")
                    .args(["sleep", "120"])
                    .spawn()
                    .unwrap();
                let pid = decoy.id() as i32;
                (decoy, pid, pid)
            }
            true => {
                let leader = std::process::Command::new("setsid")
                    .args(["-w", "sh", "-c", "sleep 120 >/dev/null 2>&1 & echo $$ $!"])
                    .output()
                    .unwrap();
                let ids: Vec<i32> = String::from_utf8_lossy(&leader.stdout)
                    .split_whitespace()
                    .map(|w| w.parse().unwrap())
                    .collect();
                assert_eq!(process_session(ids[1]), Some(ids[0]), "{ids:?}");
                let done = std::process::Command::new("true").spawn().unwrap();
                (done, ids[0], ids[1])
            }
        };
        let child = quiet(env.isolate_cmd(&repo, ["run", "--", "sleep", "300"]))
            .spawn()
            .unwrap();
        let supervisor = child.id() as i32;
        let _sleeper = wait_for_descendant(supervisor, "sleep 300", |c| c.starts_with("sleep 300"));
        assert!(wait_until(Duration::from_secs(30), || env
            .records()
            .iter()
            .any(|r| r["pid"].is_i64() && r["state"] == "running")));
        kill9(supervisor);
        let _ = finish(child, LIMIT);
        let record = env
            .records()
            .into_iter()
            .find(|r| r["state"] == "running")
            .unwrap();
        let id = record["id"].as_str().unwrap().to_string();
        assert_eq!(state_of(&env, &id), "lost");
        // The record, as it would read had the job's pid been handed to the decoy's session.
        let path = env.path().join("state/jobs").join(&id).join("job.json");
        let mut tampered: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert!(tampered["pid_start"].is_u64(), "{tampered}");
        tampered["pid"] = decoy_pid.into();
        if !keep_start {
            tampered.as_object_mut().unwrap().remove("pid_start");
        }
        fs::write(&path, serde_json::to_string_pretty(&tampered).unwrap()).unwrap();
        assert_status(&env.isolate(&repo, ["rm", "--force", &id]), 0);
        assert!(
            alive(survivor),
            "the decoy session was killed (pid_start kept: {keep_start}, leader gone: {leader_gone})"
        );
        let _ = decoy.kill();
        let _ = decoy.wait();
        kill9(survivor);
    }
}

/// The session id of `pid` (`/proc/<pid>/stat` field 6, after the command's parentheses).
fn process_session(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

#[test]
fn a_sigterm_to_the_jobs_first_process_before_cmd_runs_ends_it_and_cmd_never_runs() {
    // Between the fork and CMD's exec the job's first process is a copy of the supervisor, with
    // its signal handlers: a SIGTERM sent then ran a copied handler that swallowed it, and CMD ran
    // as if nothing had been sent (round 0 failed in each try before every signal was blocked
    // across the fork; with the helper's exec the window was there too, shorter).
    let env = TestEnv::new();
    let dir = env.path().join("work");
    fs::create_dir_all(&dir).unwrap();
    let writable = dir.to_str().unwrap().to_string();
    let mut caught = 0;
    for round in 0..20 {
        let marker = dir.join(format!("ran-{round}"));
        let script = format!("sleep 0.5; touch '{}'", marker.display());
        let args = [
            "run",
            "-q",
            "--name",
            "first",
            "--allow-write",
            &writable,
            "--",
            "sh",
            "-c",
            &script,
        ];
        let mut child = quiet(env.isolate_cmd(&dir, args)).spawn().unwrap();
        let pid = child.id();
        let mut sent = false;
        // The job's first process is the child in the job's own cgroup, `isolate-first-<hex>`
        // (the supervisor's sandboxed git has one of its own, named otherwise).
        while !sent && child.try_wait().unwrap().is_none() {
            let kids =
                fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
            for kid in kids.split_whitespace() {
                let comm = fs::read_to_string(format!("/proc/{kid}/comm")).unwrap_or_default();
                let cgroup = fs::read_to_string(format!("/proc/{kid}/cgroup")).unwrap_or_default();
                // Not yet CMD: isolate's copy, or the helper (exec'd through /proc/self/fd/N).
                if !comm.is_empty() && comm.trim() != "sh" && cgroup.contains("/isolate-first-") {
                    let kid: i32 = kid.parse().unwrap();
                    // SAFETY: kill(2) of a process this test's isolate just forked.
                    unsafe { libc::kill(kid, libc::SIGTERM) };
                    sent = true;
                    break;
                }
            }
        }
        child.wait().unwrap();
        if sent {
            caught += 1;
            assert!(
                !marker.exists(),
                "round {round}: CMD ran though its first process was sent SIGTERM before"
            );
        }
    }
    assert!(
        caught > 0,
        "no round caught the job's first process before CMD"
    );
}

/// A foreground job of an ordinary user with no cgroup (none is delegated to it) whose supervisor
/// is killed with SIGKILL: a daemon that left the job's session with `setsid` is no one's child
/// and in no session of the job's. The sentinel beside the job's first process ends it at once,
/// and the job could not kill the sentinel first (it may not signal it); what the job may do is
/// unchanged by the sentinel's domain around its own (a rename from one rule's tree to another's).
#[test]
fn a_daemon_that_left_the_session_of_a_lost_job_without_a_cgroup_is_ended() {
    let env = TestEnv::new();
    let script = r#"
        mkdir out app && cd app && git init -q && echo hi > README && git add . && git commit -qm init
        out=$(cd ../out && pwd)
        "$ISOLATE" run -q --worktree --allow-write "$out" -- sh -c '
            out=$0
            for p in /proc/[0-9]*; do
              [ "$(cat $p/comm 2>/dev/null)" = isolate-guard ] && { kill -9 ${p#/proc/} 2>/dev/null && echo guard-killed > $out/tried || echo guard-refused > $out/tried; }
            done
            mkdir "$TMPDIR/d" && mkfifo "$TMPDIR/d/.gitignore" && mv "$TMPDIR/d" d && echo renamed > $out/renamed
            setsid sh -c "echo \$\$ > $out/daemon.pid; exec sleep 300" & sleep 300' "$out" &
        supervisor=$!
        for i in $(seq 200); do [ -s ../out/daemon.pid ] && break; sleep 0.05; done
        daemon=$(cat ../out/daemon.pid)
        [ -n "$daemon" ] && kill -0 "$daemon" && echo "daemon started"
        cat ../out/tried 2>/dev/null || echo no-guard
        cat ../out/renamed 2>/dev/null
        kill -9 "$supervisor"
        for i in $(seq 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$daemon" 2>/dev/null; then echo "daemon alive"; else echo "daemon ended"; fi
        "$ISOLATE" prune >/dev/null 2>&1
        for i in $(seq 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$daemon" 2>/dev/null; then echo "daemon survived prune"; kill -9 "$daemon"; fi
        echo "jobs without a cgroup: $("$ISOLATE" ps --all --json | grep -c '"cgroup": null')""#;
    let out = env.as_ordinary_user(script);
    let said = stdout(&out);
    assert!(said.contains("daemon started"), "{said}{}", stderr(&out));
    // A rename from TMPDIR into the worktree still works in the job (the sentinel's domain
    // grants Landlock's `Refer` everywhere; without it the kernel refuses it with EXDEV).
    assert!(said.contains("renamed"), "{said}");
    assert!(!said.contains("daemon survived prune"), "{said}");
    let no_cgroup = said.contains("jobs without a cgroup: 1");
    if no_cgroup {
        assert!(said.contains("guard-refused"), "{said}");
        assert!(said.contains("daemon ended"), "{said}");
    }
}

/// An interactive job of an ordinary user with no cgroup, suspended (it stopped itself, as Ctrl-Z
/// does) when its supervisor is killed with SIGKILL: while isolate is stopped the job's tree is
/// held still, the sentinel among it, and a sentinel left stopped ended nothing. It is continued
/// when the supervisor dies, and ends what is left, a daemon that left the session included.
#[test]
fn a_lost_job_suspended_with_its_supervisor_is_ended_all_the_same() {
    let env = TestEnv::new();
    let script = r#"
        mkdir out && out=$(cd out && pwd)
        cat > out/job.sh <<'JOB'
setsid sh -c 'echo $$ > "$1/daemon.pid"; exec sleep 300' sh "$1" &
sleep 0.3; kill -TSTP $$; sleep 300
JOB
        # A shell with job control: a stop of isolate in an orphaned process group would be lost.
        tmux -L "lost$$" -f /dev/null new-session -d -x 80 -y 20 "exec bash --norc --noprofile -i"
        tmux -L "lost$$" send-keys -l "\"$ISOLATE\" run -q --allow-write $out -- sh $out/job.sh $out"
        tmux -L "lost$$" send-keys Enter
        shell=$(tmux -L "lost$$" display -p -t 0 '#{pane_pid}')
        for i in $(seq 200); do supervisor=$(pgrep -P "$shell") && break; sleep 0.05; done
        for i in $(seq 200); do [ -s out/daemon.pid ] && break; sleep 0.05; done
        daemon=$(cat out/daemon.pid)
        [ -n "$daemon" ] && kill -0 "$daemon" && echo "daemon started"
        for i in $(seq 200); do
          [ "$(cut -d' ' -f3 /proc/$supervisor/stat 2>/dev/null)" = T ] && break; sleep 0.05
        done
        [ "$(cut -d' ' -f3 /proc/$daemon/stat)" = T ] && echo "daemon held still"
        echo "jobs without a cgroup: $("$ISOLATE" ps --json | grep -c '"cgroup": null')"
        kill -9 "$supervisor"
        for i in $(seq 100); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$daemon" 2>/dev/null; then echo "daemon alive"; kill -9 "$daemon"; else echo "daemon ended"; fi
        tmux -L "lost$$" kill-server 2>/dev/null; true"#;
    let out = env.as_ordinary_user(script);
    let said = stdout(&out);
    assert!(said.contains("daemon started"), "{said}{}", stderr(&out));
    assert!(said.contains("daemon held still"), "{said}{}", stderr(&out));
    assert!(said.contains("jobs without a cgroup: 1"), "{said}");
    assert!(said.contains("daemon ended"), "{said}");
}

/// A supervisor of an ordinary user's (no cgroup) killed with SIGKILL during the grace period of
/// its own stop (here its `--timeout`'s; `kill PID; sleep 2; kill -9 PID` is the same): the stop's
/// SIGTERM had ended the sentinel too, and a daemon that ignores SIGTERM and left the session lived
/// on with no one to end it. The sentinel outlives SIGTERM, and ends the daemon, and one that forks
/// and exits over and over, which a look at every process could miss (found in review).
#[test]
fn a_supervisor_killed_in_its_own_grace_period_leaves_nothing_of_the_job() {
    let env = TestEnv::new();
    let script = r#"
        mkdir out && out=$(cd out && pwd)
        cat > out/job.sh <<'JOB'
echo $$ > "$1/main.pid"
setsid sh -c 'trap "" TERM; echo $$ > "$1/daemon.pid"; while :; do sleep 1; done' sh "$1" &
"$1/hop" "$1" &
sleep 300
JOB
        # A daemon at a new pid every moment (fork, and the parent exits), for 15 s at most.
        cat > out/hop.c <<'HOP'
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char path[4096];
    snprintf(path, sizeof path, "%s/hop.pid", argv[1]);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    setsid();
    time_t end = time(NULL) + 15;
    for (unsigned long n = 0; time(NULL) < end; n++) {
        if (fork() > 0) _exit(0);
        if (n % 64 == 0) {
            FILE *f = fopen(path, "w");
            if (f) { fprintf(f, "%d", getpid()); fclose(f); }
        }
    }
    return 0;
}
HOP
        cc -O1 -o out/hop out/hop.c || echo "cannot compile the hopper"
        "$ISOLATE" run -q --timeout 1s --grace 60s --allow-write "$out" -- sh "$out/job.sh" "$out" </dev/null &
        supervisor=$!
        for i in $(seq 200); do [ -s out/daemon.pid ] && [ -s out/main.pid ] && [ -s out/hop.pid ] && break; sleep 0.05; done
        daemon=$(cat out/daemon.pid); main=$(cat out/main.pid)
        kill -0 "$daemon" && echo "daemon started"
        # The timeout's stop has begun once the job's main process has had its SIGTERM.
        for i in $(seq 400); do kill -0 "$main" 2>/dev/null || break; sleep 0.05; done
        kill -0 "$main" 2>/dev/null || echo "stop under way"
        kill -0 "$daemon" && echo "daemon ignores the stop"
        # Time for a sentinel that looks at every process to miss the hopper between two pids.
        sleep 1.5
        pgrep -u "$(id -u)" -x isolate-guard >/dev/null && echo "sentinel waits"
        kill -9 "$supervisor"
        for i in $(seq 200); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$daemon" 2>/dev/null; then echo "daemon alive"; kill -9 "$daemon"; else echo "daemon ended"; fi
        # The hopper: gone once the pid it last wrote stays the same and is not there.
        for i in $(seq 100); do
          a=$(cat out/hop.pid); sleep 0.1; b=$(cat out/hop.pid)
          [ "$a" = "$b" ] && ! kill -0 "$b" 2>/dev/null && break
        done
        [ "$a" = "$b" ] && ! kill -0 "$b" 2>/dev/null && echo "hopper ended" || echo "hopper alive""#;
    let out = env.as_ordinary_user(script);
    let said = stdout(&out);
    for step in [
        "daemon started",
        "stop under way",
        "daemon ignores the stop",
        "sentinel waits",
        "daemon ended",
        "hopper ended",
    ] {
        assert!(said.contains(step), "{step}: {said}{}", stderr(&out));
    }
}

/// A foreground supervisor killed with SIGKILL under a parent that has not reaped it yet (an
/// orchestrator busy elsewhere): its zombie kept its pid and start time, and was taken for a live
/// supervisor, so `wait` hung, `ps` said running and `prune` settled nothing. Then, reaped or not,
/// `prune` passed over a lost job with no worktree, whose daemon (in the job's cgroup) lived on,
/// and plain `ps` did not list it. A zombie supervises nothing; every lost job is settled.
#[test]
fn a_lost_job_without_a_worktree_under_an_unreaping_parent_is_shown_and_settled() {
    // As root: the job's cgroup holds the daemon (an ordinary user's sentinel would end it first).
    let env = TestEnv::new();
    let out_dir = env.path().join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.display().to_string();
    let script = format!(
        "setsid sh -c 'trap \"\" TERM; echo $$ > {out}/daemon.pid; exec sleep 300' & sleep 300"
    );
    let mut child = quiet(env.isolate_cmd(
        env.path(),
        [
            "run",
            "-q",
            "--allow-write",
            &out,
            "--",
            "sh",
            "-c",
            &script,
        ],
    ))
    .spawn()
    .unwrap();
    let pid_file = out_dir.join("daemon.pid");
    assert!(wait_until(Duration::from_secs(20), || fs::read_to_string(
        &pid_file
    )
    .is_ok_and(|t| t.ends_with('\n'))));
    let daemon: i32 = fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let id = only_record(&env)["id"].as_str().unwrap().to_string();
    kill9(child.id() as i32);
    // Not reaped: a zombie until the end of the test.
    assert!(wait_until(Duration::from_secs(10), || !alive(
        child.id() as i32
    )));
    let ps = stdout(&env.isolate(env.path(), ["ps"]));
    assert!(ps.contains(&id) && ps.contains("lost"), "{ps}");
    let waited = finish(
        env.isolate_cmd(env.path(), ["wait", &id])
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap(),
        Duration::from_secs(20),
    );
    assert_status(&waited, 1);
    assert!(alive(daemon), "the daemon ended before prune");
    assert_status(&env.isolate(env.path(), ["prune"]), 0);
    assert!(
        wait_until(Duration::from_secs(10), || !alive(daemon)),
        "prune left the lost job's daemon alive"
    );
    assert_eq!(state_of(&env, &id), "lost");
    // Settled: plain `ps` lists it no more, `--all` does.
    assert!(!stdout(&env.isolate(env.path(), ["ps"])).contains(&id));
    assert!(stdout(&env.isolate(env.path(), ["ps", "--all"])).contains(&id));
    let _ = child.wait();
}

/// A TMPDIR the job made deeper than the descriptors isolate may hold (a chain of directories)
/// goes with the job all the same, and `rm` forgets the job: a removal holding one descriptor per
/// level failed, silently, and left the TMPDIR, a record `rm` said it forgot, and a job `--resume`
/// could not take up again.
#[test]
fn a_tmpdir_deeper_than_isolate_holds_descriptors_goes_with_the_job() {
    let env = TestEnv::new();
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct given.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    assert_eq!(got, 0);
    let depth = limit.rlim_cur.min(100_000) + 100;
    let script = format!(
        "cd \"$TMPDIR\" && python3 -c 'import os\nfor _ in range({depth}): os.mkdir(\"d\"); os.chdir(\"d\")\nopen(\"last\", \"w\").close()' && echo MA\"\"DE"
    );
    let (out, report) = env.policy_job(env.path(), &[], "default", &script);
    assert_status(&out, 0);
    assert!(stdout(&out).contains("MADE"), "{}", stderr(&out));
    let id = report["id"].as_str().unwrap();
    let job_dir = env.path().join("state/jobs").join(id);
    assert!(!job_dir.join("tmp").exists(), "the job's TMPDIR was left");
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    assert_status(&env.isolate(env.path(), ["rm", id]), 0);
    assert!(!job_dir.exists(), "rm left the job's directory");
}
