//! The hermetic test environment: a temporary HOME, git configuration files the test writes, a
//! temporary ISOLATE_HOME, real repositories made with the real git, and the real isolate binary.
//! Every wait is bounded, so a hung child fails the test instead of hanging CI.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

pub mod model;
pub mod mount;
pub mod screen;
pub mod snapshot;
pub mod user;
pub use snapshot::Snapshot;

pub const BIN: &str = env!("CARGO_BIN_EXE_isolate");

/// How long any single isolate or git invocation in a test may take.
pub const LIMIT: Duration = Duration::from_secs(120);

pub struct TestEnv {
    pub root: tempfile::TempDir,
    pub home: PathBuf,
    pub state: PathBuf,
    gitconfig: PathBuf,
    /// `ISOLATE_TIER` for every isolate this test runs (`None`: the machine's own choice).
    tier: Option<&'static str>,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let root = tempfile::Builder::new()
            .prefix("isolate-test-")
            .tempdir()
            .unwrap();
        let home = root.path().join("home");
        let state = root.path().join("state");
        fs::create_dir_all(&home).unwrap();
        let gitconfig = root.path().join("gitconfig");
        fs::write(
            &gitconfig,
            "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n\
             [advice]\n\tdetachedHead = false\n[gc]\n\tauto = 0\n",
        )
        .unwrap();
        TestEnv {
            root,
            home,
            state,
            gitconfig,
            tier: None,
        }
    }

    /// A test environment whose jobs run in the Landlock-only tier (`ISOLATE_TIER=landlock`), as
    /// where user namespaces are refused: what that tier must still refuse is tested there.
    pub fn landlock_only() -> TestEnv {
        TestEnv {
            tier: Some("landlock"),
            ..TestEnv::new()
        }
    }

    /// Its jobs run in the Landlock-only tier.
    pub fn tier_is_landlock(&self) -> bool {
        self.tier == Some("landlock")
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }

    /// The environment every process of a test gets.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("ISOLATE_HOME", &self.state)
            .env("GIT_CONFIG_GLOBAL", &self.gitconfig)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LANG", "C")
            .env("TMPDIR", self.root.path());
        if let Some(tier) = self.tier {
            cmd.env("ISOLATE_TIER", tier);
        }
        // CI runs the sandbox's tests once more as on an older kernel (`.ci/run`).
        if let Some(abi) = std::env::var_os("ISOLATE_LANDLOCK_ABI_MAX") {
            cmd.env("ISOLATE_LANDLOCK_ABI_MAX", abi);
        }
    }

    /// `isolate ARGS` in `dir`, bounded.
    pub fn isolate<I, S>(&self, dir: &Path, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.isolate_cmd(dir, args);
        finish(cmd.stdin(Stdio::null()).spawn().unwrap(), LIMIT)
    }

    /// `isolate ARGS` in `dir` with extra environment variables, bounded.
    pub fn isolate_with(&self, dir: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
        let mut cmd = self.isolate_cmd(dir, args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        finish(cmd.stdin(Stdio::null()).spawn().unwrap(), LIMIT)
    }

    /// A Python program for a job to run: `body` after a prelude that imports what attempts use and
    /// defines `attempt(name, f)`, which prints `name: ok`, or `name: ERRNO` when `f` raises an
    /// OSError. Returns its path.
    pub fn probe(&self, name: &str, body: &str) -> String {
        const PRELUDE: &str = "import ctypes, errno, os, socket, sys, threading, time\n\
            def attempt(name, f):\n\
            \x20   try:\n\
            \x20       f()\n\
            \x20       print(name + ': ok', flush=True)\n\
            \x20   except OSError as e:\n\
            \x20       print(name + ': ' + errno.errorcode.get(e.errno, str(e.errno)), flush=True)\n";
        self.file(name, &format!("{PRELUDE}{body}"))
            .display()
            .to_string()
    }

    /// Writes a file (a policy, a helper program) in the test's directory; returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root.path().join(name);
        fs::write(&path, text).unwrap();
        path
    }

    /// `isolate run --policy POLICY --report FILE -- sh -c SCRIPT` in `dir` (no worktree) with extra
    /// environment variables: its output, and its report (`Null` when none was written).
    pub fn policy_job(
        &self,
        dir: &Path,
        vars: &[(&str, &str)],
        policy: &str,
        script: &str,
    ) -> (Output, serde_json::Value) {
        let report = self.root.path().join("report.json");
        let _ = fs::remove_file(&report);
        let out = self.isolate_with(
            dir,
            vars,
            &[
                "run",
                "--policy",
                policy,
                "--report",
                report.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                script,
            ],
        );
        let value = fs::read_to_string(&report)
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or(serde_json::Value::Null);
        (out, value)
    }

    pub fn isolate_cmd<I, S>(&self, dir: &Path, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(BIN);
        self.apply(&mut cmd);
        cmd.current_dir(dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `git -C dir ARGS`; panics unless it succeeds; returns stdout trimmed.
    pub fn git<I, S>(&self, dir: &Path, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.git_output(dir, args);
        assert!(
            out.status.success(),
            "git failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    pub fn git_output<I, S>(&self, dir: &Path, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        self.apply(&mut cmd);
        cmd.arg("-C").arg(dir).args(args).stdin(Stdio::null());
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        finish(cmd.spawn().unwrap(), LIMIT)
    }

    /// A repository with two commits: `README`, `src/lib.txt`, and a `.gitignore` ignoring `target/`.
    pub fn repo(&self, name: &str) -> PathBuf {
        let dir = self.root.path().join(name);
        fs::create_dir_all(dir.join("src")).unwrap();
        self.git(&dir, ["init", "-q"]);
        fs::write(dir.join("README"), "hello\n").unwrap();
        self.git(&dir, ["add", "README"]);
        self.git(&dir, ["commit", "-q", "-m", "first"]);
        fs::write(dir.join("src/lib.txt"), "library\n").unwrap();
        fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        self.git(&dir, ["add", "."]);
        self.git(&dir, ["commit", "-q", "-m", "second"]);
        dir
    }

    /// Branches of `repo` (short names).
    pub fn branches(&self, repo: &Path) -> Vec<String> {
        let out = self.git(
            repo,
            ["for-each-ref", "--format=%(refname:short)", "refs/heads/"],
        );
        out.lines().map(str::to_string).collect()
    }

    pub fn isolate_branches(&self, repo: &Path) -> Vec<String> {
        self.branches(repo)
            .into_iter()
            .filter(|b| b.starts_with("isolate/"))
            .collect()
    }

    /// Every worktree directory under the state directory.
    pub fn worktree_dirs(&self) -> Vec<PathBuf> {
        let root = self.state.join("worktrees");
        let mut out = Vec::new();
        for key in fs::read_dir(&root).into_iter().flatten().flatten() {
            for wt in fs::read_dir(key.path()).into_iter().flatten().flatten() {
                out.push(wt.path());
            }
        }
        out
    }

    /// Every job record on disk, parsed.
    pub fn records(&self) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        for job in fs::read_dir(self.state.join("jobs"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(text) = fs::read_to_string(job.path().join("job.json")) {
                out.push(serde_json::from_str(&text).unwrap());
            }
        }
        out
    }

    /// `git fsck --strict` in `repo` must be clean.
    pub fn assert_fsck(&self, repo: &Path) {
        let out = self.git_output(repo, ["fsck", "--strict", "--no-progress", "--no-dangling"]);
        assert!(
            out.status.success() && out.stderr.is_empty() && out.stdout.is_empty(),
            "git fsck in {}: {}{}",
            repo.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `isolate run --worktree --report FILE EXTRA -- sh -c SCRIPT` in `dir`: its output, and its
    /// report (`Null` when none was written).
    pub fn worktree_job(
        &self,
        dir: &Path,
        extra: &[&str],
        script: &str,
    ) -> (Output, serde_json::Value) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let report = self
            .path()
            .join(format!("report-{}.json", N.fetch_add(1, Ordering::Relaxed)));
        let mut args: Vec<&str> = vec!["run", "--worktree", "--report", report.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.extend(["--", "sh", "-c", script]);
        let out = self.isolate(dir, &args);
        let value = fs::read_to_string(&report)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(serde_json::Value::Null);
        (out, value)
    }

    /// A report written with --report, parsed.
    pub fn report(&self, path: &Path) -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
    }
}

/// Waits for `child` at most `limit`, collecting its output; kills it and panics on timeout.
pub fn finish(mut child: Child, limit: Duration) -> Output {
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out = thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    });
    let err = thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("process did not finish within {limit:?}");
        }
        thread::sleep(Duration::from_millis(5));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Polls `check` until it is true or `limit` passes.
pub fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    check()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the exit status, showing isolate's stderr when it differs.
#[track_caller]
pub fn assert_status(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "expected status {code}\nstdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
}

/// Whether a process with this pid is alive (and not a zombie).
pub fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next());
            state != Some("Z") && state != Some("X")
        }
        Err(_) => false,
    }
}
