//! How the job enters the sandbox. A supervisor with no other thread at the fork (a foreground
//! job's, a background job's) has its forked child restrict itself and exec CMD; one with another
//! thread (a job's with a network proxy, which accepts from the start) has the child exec the
//! pre-exec helper:
//! `isolate-sandbox-exec` beside isolate when it is there as `cargo install` leaves it (a plain
//! file of isolate's owner that nobody else may write), else isolate itself. Whichever way, the
//! job is confined and starts with what exec gives a process; a file beside isolate that fails the
//! rule is never run; a helper never applies a plan of another build.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::*;

const HELPER: &str = "isolate-sandbox-exec";

/// `isolate` linked (or copied) into a directory of its own, with nothing beside it.
fn isolate_alone(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.path().join(name);
    fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("isolate");
    if fs::hard_link(BIN, &bin).is_err() {
        fs::copy(BIN, &bin).unwrap();
    }
    bin
}

/// A stand-in helper, mode `mode`: a copy of touch(1), an executable like the real helper, which
/// given the helper's arguments (`__sandbox-exec -- CMD...`) makes a file `__sandbox-exec` in the
/// job's directory and starts nothing.
fn stand_in(path: &Path, mode: u32) {
    fs::copy("/usr/bin/touch", path).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// How a job is run: in the foreground or the background (the supervisor's child enters the
/// sandbox itself), or with a network proxy (`--allow-net`: the proxy's thread runs at the fork, so
/// the child execs the helper).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Foreground,
    Background,
    Proxied,
}

const MODES: [Mode; 3] = [Mode::Foreground, Mode::Background, Mode::Proxied];

/// `bin run -q [--bg] OPTIONS -- CMD` in `dir`, and for a background job `bin wait` on it: the
/// job's status, and its output in the foreground.
fn run_by(
    env: &TestEnv,
    bin: &Path,
    dir: &Path,
    mode: Mode,
    options: &[&str],
    cmd: &[&str],
) -> Output {
    let isolate = |args: &[&str]| {
        let mut cmd = Command::new(bin);
        env.apply(&mut cmd);
        cmd.current_dir(dir)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        finish(cmd.spawn().unwrap(), LIMIT)
    };
    match mode {
        Mode::Foreground => isolate(&[&["run", "-q"], options, &["--"], cmd].concat()),
        Mode::Proxied => {
            let proxied = ["run", "-q", "--allow-net", "example.com"];
            isolate(&[&proxied, options, &["--"], cmd].concat())
        }
        Mode::Background => {
            let started = isolate(&[&["run", "-q", "--bg"], options, &["--"], cmd].concat());
            if started.status.code() != Some(0) {
                // The job did not start: `run --bg` says so itself.
                return started;
            }
            isolate(&["wait", stdout(&started).trim()])
        }
    }
}

/// `bin run -q -- true` in a new directory `name`; its status, and whether a stand-in ran there.
fn plain_run(env: &TestEnv, bin: &Path, name: &str, mode: Mode) -> (Option<i32>, bool) {
    let dir = env.path().join(format!("work-{name}-{mode:?}"));
    fs::create_dir_all(&dir).unwrap();
    let out = run_by(env, bin, &dir, mode, &[], &["true"]);
    (out.status.code(), dir.join("__sandbox-exec").exists())
}

/// A worktree job started by `bin` that tries to write the project; returns its exit status and
/// asserts the project untouched.
fn confined_run(env: &TestEnv, bin: &Path, project: &Path, mode: Mode) -> Option<i32> {
    let before = fs::read_to_string(project.join("README")).unwrap();
    let script = "echo escaped > \"$ISOLATE_REPO/README\"; echo inside > made.txt; true";
    let out = run_by(
        env,
        bin,
        project,
        mode,
        &["--worktree"],
        &["sh", "-c", script],
    );
    assert_eq!(
        fs::read_to_string(project.join("README")).unwrap(),
        before,
        "the job wrote the project through {} ({mode:?}): {}",
        bin.display(),
        stderr(&out)
    );
    out.status.code()
}

#[test]
fn the_helper_beside_isolate_is_built_with_it_and_the_job_it_starts_is_confined() {
    let env = TestEnv::new();
    let beside = Path::new(BIN).with_file_name(HELPER);
    assert!(
        beside.is_file(),
        "cargo builds {} beside isolate: {}",
        HELPER,
        beside.display()
    );
    let project = env.repo("project");
    for mode in MODES {
        assert_eq!(confined_run(&env, Path::new(BIN), &project, mode), Some(0));
    }
}

#[test]
fn isolate_alone_is_its_own_helper_and_the_job_is_confined() {
    let env = TestEnv::new();
    let bin = isolate_alone(&env, "alone");
    let project = env.repo("project");
    for mode in MODES {
        assert_eq!(confined_run(&env, &bin, &project, mode), Some(0));
    }
}

#[test]
fn a_helper_beside_isolate_that_others_may_write_or_that_is_a_link_is_never_run() {
    let env = TestEnv::new();
    let project = env.repo("project");
    for (name, mode, link) in [
        ("group", 0o775, false),
        ("world", 0o757, false),
        ("not-executable", 0o644, false),
        ("link", 0o755, true),
    ] {
        let bin = isolate_alone(&env, name);
        let helper = bin.with_file_name(HELPER);
        if link {
            let target = env.path().join(format!("{name}-target"));
            stand_in(&target, mode);
            std::os::unix::fs::symlink(&target, &helper).unwrap();
        } else {
            stand_in(&helper, mode);
        }
        assert_eq!(
            plain_run(&env, &bin, name, Mode::Proxied),
            (Some(0), false),
            "{name}"
        );
        assert_eq!(
            confined_run(&env, &bin, &project, Mode::Proxied),
            Some(0),
            "{name}"
        );
    }
    // Another user's file (a change of owner needs root, which CI has).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let bin = isolate_alone(&env, "other-owner");
        let helper = bin.with_file_name(HELPER);
        stand_in(&helper, 0o755);
        std::os::unix::fs::chown(&helper, Some(65534), Some(65534)).unwrap();
        assert_eq!(
            plain_run(&env, &bin, "other-owner", Mode::Proxied),
            (Some(0), false)
        );
    }
}

#[test]
fn a_well_formed_file_beside_isolate_is_what_starts_a_job_whose_supervisor_has_another_thread() {
    // The check above is the only thing that keeps a file from being run: here it passes, and
    // the stand-in runs (and the job, which it does not start, fails to start).
    let env = TestEnv::new();
    let bin = isolate_alone(&env, "formed");
    stand_in(&bin.with_file_name(HELPER), 0o755);
    let (status, ran) = plain_run(&env, &bin, "formed", Mode::Proxied);
    assert!(ran, "the helper beside isolate was not used");
    assert_ne!(status, Some(0), "a job that never started succeeded");
}

#[test]
fn a_supervisor_with_no_other_thread_enters_the_sandbox_in_its_child_without_the_helper() {
    // The same well-formed stand-in is never run in the foreground or the background: the forked
    // child restricts itself, and the job is confined all the same (a plain job and a worktree
    // job, whose creation ran git with threads of its own that are gone by the fork; a background
    // job, whose log's thread starts after the fork).
    let env = TestEnv::new();
    let project = env.repo("project");
    let bin = isolate_alone(&env, "within");
    stand_in(&bin.with_file_name(HELPER), 0o755);
    for mode in [Mode::Foreground, Mode::Background] {
        assert_eq!(
            plain_run(&env, &bin, "within", mode),
            (Some(0), false),
            "{mode:?}"
        );
        assert_eq!(
            confined_run(&env, &bin, &project, mode),
            Some(0),
            "{mode:?}"
        );
    }
    assert!(!project.join("__sandbox-exec").exists());
}

/// The signals `/proc/<pid>/status` of the text given says are ignored.
fn ignored(status: &str) -> u64 {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .unwrap();
    u64::from_str_radix(line.trim(), 16).unwrap()
}

#[test]
fn the_job_starts_with_nothing_ignored_that_isolate_ignores_and_only_its_streams_open() {
    // What exec of CMD by a fresh process gives it: no signal ignored that its caller did not
    // ignore (isolate, as every Rust program, ignores SIGPIPE), nothing of the supervisor's open
    // but stdin, stdout and stderr. sh applies the redirect and execs grep in its own place; a
    // non-interactive sh ignores nothing.
    let env = TestEnv::new();
    let bin = isolate_alone(&env, "first");
    let sigpipe = 1u64 << (libc::SIGPIPE - 1);
    // What this test passes on: std's spawn sets SIGPIPE back to its default for isolate.
    let given = ignored(&fs::read_to_string("/proc/self/status").unwrap()) & !sigpipe;
    for mode in MODES {
        let dir = env.path().join(format!("first-{mode:?}"));
        fs::create_dir_all(&dir).unwrap();
        let script = "ls /proc/self/fd > fds; exec grep '^SigIgn' /proc/self/status > ignored";
        let writable = ["--allow-write", dir.to_str().unwrap()];
        let out = run_by(&env, &bin, &dir, mode, &writable, &["sh", "-c", script]);
        assert_status(&out, 0);
        let job = ignored(&fs::read_to_string(dir.join("ignored")).unwrap());
        assert_eq!(job & sigpipe, 0, "{mode:?}: SIGPIPE ignored");
        assert_eq!(
            job & !given,
            0,
            "{mode:?}: ignored {job:x}, given {given:x}"
        );
        // 0, 1 (the redirect), 2, and the descriptor ls opens for /proc/self/fd.
        let fds = fs::read_to_string(dir.join("fds")).unwrap();
        assert_eq!(fds.split_whitespace().count(), 4, "{mode:?}: {fds}");
    }
}

#[test]
fn a_helper_refuses_a_plan_of_another_build_and_runs_nothing() {
    let env = TestEnv::new();
    let marker = env.path().join("cmd-ran");
    let beside = Path::new(BIN).with_file_name(HELPER);
    for (program, what) in [(beside.as_path(), "beside"), (Path::new(BIN), "isolate")] {
        let mut cmd = Command::new(program);
        env.apply(&mut cmd);
        let out = cmd
            .args(["__sandbox-exec", "--", "sh", "-c"])
            .arg(format!("echo ran > '{}'", marker.display()))
            .env(
                "ISOLATE_SANDBOX_PLAN",
                r#"{"build":"another","rules":null,"status_fd":1,"go_fd":0}"#,
            )
            .env("ISOLATE_SANDBOX_BUILD", "another")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_status(&out, 125);
        assert!(
            stderr(&out).contains("not from the same build"),
            "{what}: {}",
            stderr(&out)
        );
        assert!(
            !marker.exists(),
            "{what}: CMD ran under another build's plan"
        );
    }
}

#[test]
fn a_helper_of_another_build_hands_over_to_isolate_itself_before_reading_the_plan() {
    // `cargo build --bin isolate` relinks isolate alone: the helper beside it is of another
    // build, and isolate itself (named by the supervisor) takes its place, arguments and
    // environment unchanged but for the hand-over's own variable.
    let env = TestEnv::new();
    let seen = env.path().join("seen");
    let isolate = env.path().join("isolate-itself");
    fs::write(
        &isolate,
        format!(
            "#!/bin/sh\n{{ echo \"$@\"; echo \"plan=$ISOLATE_SANDBOX_PLAN\"; \
             echo \"fallback=${{ISOLATE_SANDBOX_FALLBACK-unset}}\"; }} > '{}'\n",
            seen.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&isolate, fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new(Path::new(BIN).with_file_name(HELPER));
    env.apply(&mut cmd);
    let out = cmd
        .args(["__sandbox-exec", "--", "true"])
        .env("ISOLATE_SANDBOX_PLAN", "{not read}")
        .env("ISOLATE_SANDBOX_BUILD", "another")
        .env("ISOLATE_SANDBOX_FALLBACK", &isolate)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_status(&out, 0);
    assert_eq!(
        fs::read_to_string(&seen).unwrap(),
        "__sandbox-exec -- true\nplan={not read}\nfallback=unset\n"
    );
}

#[test]
fn a_helper_beside_isolate_that_cannot_be_executed_leaves_the_job_to_isolate_itself() {
    // It passes the check (a plain file of isolate's owner, mode 755) but is no executable of
    // this machine: exec fails, and isolate starts the job as before the helper existed.
    let env = TestEnv::new();
    let project = env.repo("project");
    let bin = isolate_alone(&env, "garbage");
    let helper = bin.with_file_name(HELPER);
    fs::write(&helper, [0x7f, b'E', b'L', b'F', 0, 0, 0, 0]).unwrap();
    fs::set_permissions(&helper, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        plain_run(&env, &bin, "garbage", Mode::Proxied),
        (Some(0), false)
    );
    assert_eq!(confined_run(&env, &bin, &project, Mode::Proxied), Some(0));
}
