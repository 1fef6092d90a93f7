//! The pre-exec helper: `isolate-sandbox-exec` beside isolate when it is there as `cargo install`
//! leaves it (a plain file of isolate's owner that nobody else may write), else isolate itself.
//! Whichever starts the job, the job is confined; a file beside isolate that fails the rule is
//! never run; a helper never applies a plan of another build.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

/// `bin run -q -- true` in a new directory `name`; its status, and whether a stand-in ran there.
fn plain_run(env: &TestEnv, bin: &Path, name: &str) -> (Option<i32>, bool) {
    let dir = env.path().join(format!("work-{name}"));
    fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new(bin);
    env.apply(&mut cmd);
    cmd.current_dir(&dir)
        .args(["run", "-q", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = finish(cmd.spawn().unwrap(), LIMIT);
    (out.status.code(), dir.join("__sandbox-exec").exists())
}

/// A worktree job started by `bin` that tries to write the project; returns its exit status and
/// asserts the project untouched.
fn confined_run(env: &TestEnv, bin: &Path, project: &Path) -> Option<i32> {
    let before = fs::read_to_string(project.join("README")).unwrap();
    let mut cmd = Command::new(bin);
    env.apply(&mut cmd);
    cmd.current_dir(project)
        .args(["run", "-q", "--worktree", "--", "sh", "-c"])
        .arg("echo escaped > \"$ISOLATE_REPO/README\"; echo inside > made.txt; true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = finish(cmd.spawn().unwrap(), LIMIT);
    assert_eq!(
        fs::read_to_string(project.join("README")).unwrap(),
        before,
        "the job wrote the project through {}: {}",
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
    assert_eq!(confined_run(&env, Path::new(BIN), &project), Some(0));
}

#[test]
fn isolate_alone_is_its_own_helper_and_the_job_is_confined() {
    let env = TestEnv::new();
    let bin = isolate_alone(&env, "alone");
    let project = env.repo("project");
    assert_eq!(confined_run(&env, &bin, &project), Some(0));
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
        assert_eq!(plain_run(&env, &bin, name), (Some(0), false), "{name}");
        assert_eq!(confined_run(&env, &bin, &project), Some(0), "{name}");
    }
    // Another user's file (a change of owner needs root, which CI has).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let bin = isolate_alone(&env, "other-owner");
        let helper = bin.with_file_name(HELPER);
        stand_in(&helper, 0o755);
        std::os::unix::fs::chown(&helper, Some(65534), Some(65534)).unwrap();
        assert_eq!(plain_run(&env, &bin, "other-owner"), (Some(0), false));
    }
}

#[test]
fn a_well_formed_file_beside_isolate_is_what_starts_the_job() {
    // The check above is the only thing that keeps a file from being run: here it passes, and
    // the stand-in runs (and the job, which it does not start, fails to start).
    let env = TestEnv::new();
    let bin = isolate_alone(&env, "formed");
    stand_in(&bin.with_file_name(HELPER), 0o755);
    let (status, ran) = plain_run(&env, &bin, "formed");
    assert!(ran, "the helper beside isolate was not used");
    assert_ne!(status, Some(0), "a job that never started succeeded");
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
    assert_eq!(plain_run(&env, &bin, "garbage"), (Some(0), false));
    assert_eq!(confined_run(&env, &bin, &project), Some(0));
}
