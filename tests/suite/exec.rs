//! `isolate exec JOB -- CMD`: a second command in a running (or kept) job's worktree, in the job's
//! sandbox, supervised as part of the job.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::support::*;

/// A background worktree job running `script`; its id and worktree.
fn running(env: &TestEnv, repo: &std::path::Path, script: &str) -> (String, PathBuf) {
    let out = env.isolate(
        repo,
        ["run", "--worktree", "--bg", "--", "sh", "-c", script],
    );
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let status = env.isolate(env.path(), ["status", &id, "--json"]);
    let record: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    let path = PathBuf::from(record["worktree"]["path"].as_str().unwrap());
    (id, path)
}

/// CMD runs in the job's worktree with the job's variables, may write the worktree and not the
/// project nor a path-named socket's directory outside (the seccomp layer judges its connects
/// too), and exits with its own status; an unknown command is 127.
#[test]
fn exec_runs_in_the_jobs_worktree_under_its_sandbox_with_its_own_status() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (id, worktree) = running(&env, &repo, "sleep 30");
    let project_before = Snapshot::take(&repo);
    let socket_dir = env.path().join("outside");
    fs::create_dir_all(&socket_dir).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(socket_dir.join("s")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let probe = env.probe(
        "probe.py",
        &format!(
            "print(os.getcwd())\n\
             print(os.environ['ISOLATE_JOB'])\n\
             open('from-exec', 'w').write('x')\n\
             attempt('project', lambda: open('{repo}/planted', 'w'))\n\
             attempt('socket', lambda: socket.socket(socket.AF_UNIX).connect('{sock}'))\n\
             sys.exit(7)\n",
            repo = repo.display(),
            sock = socket_dir.join("s").display()
        ),
    );
    let out = env.isolate(env.path(), ["exec", &id, "--", "python3", &probe]);
    assert_status(&out, 7);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        fs::canonicalize(&worktree).unwrap().to_str().unwrap()
    );
    assert_eq!(lines[1], id);
    assert!(text.contains("project: EACCES"), "{text}");
    assert!(!text.contains("socket: ok"), "{text}");
    assert!(listener.accept().is_err(), "the socket outside was reached");
    assert_eq!(fs::read_to_string(worktree.join("from-exec")).unwrap(), "x");
    project_before.assert_unchanged(&Snapshot::take(&repo), "the project");

    let out = env.isolate(env.path(), ["exec", &id, "--", "no-such-command-anywhere"]);
    assert_status(&out, 127);
    let out = env.isolate(env.path(), ["stop", &id]);
    assert_status(&out, 0);
}

/// CMD ends with the job: when the job's main process exits, the job's end stops CMD's tree
/// before it settles the worktree, so a clean worktree is removed as usual and exec returns.
#[test]
fn exec_ends_with_the_job_before_its_worktree_is_settled() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (id, worktree) = running(&env, &repo, "sleep 3");
    let started = Instant::now();
    let out = env.isolate(
        env.path(),
        ["exec", &id, "--", "sh", "-c", "sleep 3017 & sleep 3017"],
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "exec outlived the job"
    );
    assert_status(&out, 143);
    assert_eq!(
        env.isolate(env.path(), ["wait", &id]).status.code(),
        Some(0)
    );
    let status = env.isolate(env.path(), ["status", &id, "--json"]);
    let record: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(record["worktree"]["removed"], true, "{record}");
    assert!(!worktree.exists());
    let left = std::process::Command::new("pgrep")
        .args(["-f", "sleep 3017"])
        .output()
        .unwrap();
    assert!(
        stdout(&left).trim().is_empty(),
        "left behind: {}",
        stdout(&left)
    );
}

/// CMD in the kept worktree of an ended job holds it as a resume would (a `run --resume` meanwhile
/// is refused); a job without a worktree has nothing to run in (125).
#[test]
fn exec_in_a_kept_worktree_holds_it_and_a_job_without_one_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = env.worktree_job(&repo, &["--keep"], "true");
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap().to_string();
    let mut cmd = env.isolate_cmd(env.path(), ["exec", &id, "--", "sleep", "5"]);
    let child = cmd.spawn().unwrap();
    assert!(wait_until(Duration::from_secs(10), || env
        .state
        .join("jobs")
        .join(&id)
        .join("exec")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some())));
    let resume = env.isolate(&repo, ["run", "--resume", &id, "--", "true"]);
    assert_status(&resume, 125);
    assert!(
        stderr(&resume).contains("being resumed"),
        "{}",
        stderr(&resume)
    );
    let out = finish(child, LIMIT);
    assert_status(&out, 0);

    let plain = env.isolate(env.path(), ["run", "--bg", "--", "sleep", "10"]);
    let plain_id = stdout(&plain).trim().to_string();
    let out = env.isolate(env.path(), ["exec", &plain_id, "--", "true"]);
    assert_status(&out, 125);
    assert!(stderr(&out).contains("no worktree"), "{}", stderr(&out));
    env.isolate(env.path(), ["stop", &plain_id]);
}

/// `PWD` names the directory the command starts in, never the caller's, in every mode (headless,
/// `--no-pty`, background, `exec` from outside the worktree and from inside it), and `OLDPWD` is
/// not passed: a tool that trusts `PWD` (opencode) would work on the caller's checkout.
#[test]
fn pwd_is_the_commands_own_directory_in_every_mode_and_oldpwd_is_not_passed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let sub = repo.join("src");
    let caller = [
        ("PWD", sub.to_str().unwrap()),
        ("OLDPWD", repo.to_str().unwrap()),
    ];
    let script = "printenv PWD; printenv OLDPWD || echo no-oldpwd";
    let said = |out: &std::process::Output| {
        let text = stdout(out);
        let mut lines = text.lines().map(str::to_string);
        (
            lines.next().unwrap_or_default(),
            lines.next().unwrap_or_default(),
        )
    };
    for extra in [&[][..], &["--no-pty"][..]] {
        let mut args = vec!["run", "--worktree", "--keep"];
        args.extend_from_slice(extra);
        args.extend(["--", "sh", "-c", script]);
        let out = env.isolate_with(&sub, &caller, &args);
        assert_status(&out, 0);
        let id = stderr(&out).split_whitespace().nth(2).unwrap().to_string();
        let worktree = env
            .worktree_dirs()
            .into_iter()
            .find(|w| w.ends_with(&id))
            .unwrap();
        assert_eq!(
            said(&out),
            (
                worktree.join("src").display().to_string(),
                "no-oldpwd".to_string()
            ),
            "{extra:?}"
        );
        // exec, from outside the worktree (its top) and from inside it (that directory).
        let out = env.isolate_with(&repo, &caller, &["exec", &id, "--", "sh", "-c", script]);
        assert_status(&out, 0);
        assert_eq!(said(&out).0, worktree.display().to_string());
        assert_eq!(said(&out).1, "no-oldpwd");
        let inside = worktree.join("src");
        let out = env.isolate_with(&inside, &caller, &["exec", &id, "--", "sh", "-c", script]);
        assert_status(&out, 0);
        assert_eq!(said(&out).0, inside.display().to_string());
        let out = env.isolate(&repo, ["rm", &id]);
        assert_status(&out, 0);
    }
    // Background: the log says the same.
    let out = env.isolate_with(
        &sub,
        &caller,
        &["run", "--worktree", "--bg", "--", "sh", "-c", script],
    );
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    assert_status(&env.isolate(&repo, ["wait", &id]), 0);
    let logs = env.isolate(&repo, ["logs", &id]);
    let text = stdout(&logs);
    assert!(text.ends_with("/src\nno-oldpwd\n"), "{text}");
    assert!(!text.contains(&format!("{}\n", sub.display())), "{text}");
}
