//! Escapes from the worktree: each attempt really runs inside the job (it prints `attempted` after
//! it), and the project is byte-for-byte unchanged afterwards, `git fsck` clean.

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::support::*;

/// Runs `script` in a job of a fresh project; asserts the attempt ran and the project is unchanged.
fn attempt(script: &str) -> (TestEnv, Output) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = attempt_in(&env, &repo, script);
    (env, out)
}

fn attempt_in(env: &TestEnv, repo: &Path, script: &str) -> Output {
    let before = Snapshot::take(repo);
    let main = env.git(repo, ["rev-parse", "main"]);
    let full = format!("{script}\necho attempted");
    let out = env.isolate(repo, ["run", "--worktree", "--", "sh", "-c", &full]);
    assert_status(&out, 0);
    assert!(
        stdout(&out).ends_with("attempted\n"),
        "the attempt did not run: {}",
        stderr(&out)
    );
    before.assert_unchanged(&Snapshot::take(repo), script);
    assert_eq!(
        env.git(repo, ["rev-parse", "main"]),
        main,
        "main moved: {script}"
    );
    env.assert_fsck(repo);
    out
}

#[test]
fn write_by_absolute_path_into_the_project() {
    let (_, out) = attempt(
        "echo evil > \"$ISOLATE_REPO/README\"; echo evil > \"$ISOLATE_REPO/new-file\"; \
         mkdir \"$ISOLATE_REPO/newdir\"; rm -f \"$ISOLATE_REPO/src/lib.txt\"; \
         truncate -s 0 \"$ISOLATE_REPO/README\"; cd ..; echo evil > ../README",
    );
    assert!(
        stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn write_through_a_symlink() {
    attempt("ln -s \"$ISOLATE_REPO/README\" link && echo evil > link; ln -s \"$ISOLATE_REPO\" dir && echo evil > dir/x");
}

#[test]
fn write_through_a_hardlink() {
    attempt("ln \"$ISOLATE_REPO/README\" hard; echo evil >> hard; ln \"$ISOLATE_REPO/.git/config\" cfg; echo evil >> cfg");
}

#[test]
fn rename_a_project_file() {
    attempt(
        "mv \"$ISOLATE_REPO/README\" \"$ISOLATE_REPO/README2\"; mv \"$ISOLATE_REPO/README\" ./stolen; \
         mv \"$ISOLATE_REPO/src\" \"$ISOLATE_REPO/src2\"",
    );
}

#[test]
fn git_dash_c_commit_in_the_project() {
    attempt(
        "git -C \"$ISOLATE_REPO\" commit -q --allow-empty -m evil; git -C \"$ISOLATE_REPO\" branch evil; \
         git -C \"$ISOLATE_REPO\" tag evil; git -C \"$ISOLATE_REPO\" stash",
    );
}

#[test]
fn git_dir_and_work_tree_pointed_at_the_project() {
    attempt(
        "GIT_DIR=\"$ISOLATE_REPO/.git\" GIT_WORK_TREE=\"$ISOLATE_REPO\" git commit -q --allow-empty -m evil; \
         GIT_DIR=\"$ISOLATE_REPO/.git\" git update-ref refs/heads/main HEAD~1; \
         GIT_DIR=\"$ISOLATE_REPO/.git\" GIT_WORK_TREE=\"$ISOLATE_REPO\" git checkout -q HEAD~1",
    );
}

#[test]
fn plant_a_hook_or_hookspath_or_fsmonitor_in_the_project() {
    attempt(
        "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > \"$ISOLATE_REPO/.git/hooks/post-commit\"; \
         mkdir -p \"$ISOLATE_REPO/.git/hooks\"; \
         git -C \"$ISOLATE_REPO\" config core.hooksPath /tmp; \
         git -C \"$ISOLATE_REPO\" config core.fsmonitor 'touch /tmp/pwned'; \
         echo '[core] fsmonitor = evil' >> \"$ISOLATE_REPO/.git/config\"; \
         echo '* filter=evil' > \"$ISOLATE_REPO/.git/info/attributes\"",
    );
}

#[test]
fn move_the_projects_main() {
    attempt(
        "git -C \"$ISOLATE_REPO\" update-ref refs/heads/main HEAD~1; \
         echo 0000000000000000000000000000000000000000 > \"$ISOLATE_REPO/.git/refs/heads/main\"; \
         git -C \"$ISOLATE_REPO\" pack-refs --all; git -C \"$ISOLATE_REPO\" symbolic-ref HEAD refs/heads/other",
    );
}

#[test]
fn overwrite_or_delete_objects_in_the_projects_store() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // Both kinds of storage: loose objects and a pack.
    env.git(&repo, ["gc", "-q"]);
    fs::write(repo.join("loose.txt"), "loose\n").unwrap();
    env.git(&repo, ["add", "loose.txt"]);
    env.git(&repo, ["commit", "-q", "-m", "loose"]);
    attempt_in(
        &env,
        &repo,
        "for f in $(find \"$ISOLATE_REPO/.git/objects\" -type f); do true > \"$f\"; echo x >> \"$f\"; rm -f \"$f\"; \
         mv \"$f\" \"$f.moved\"; done; rm -rf \"$ISOLATE_REPO/.git/objects/pack\"; \
         git -C \"$ISOLATE_REPO\" gc --prune=now; git -C \"$ISOLATE_REPO\" repack -adq",
    );
}

#[test]
fn write_through_an_inherited_descriptor() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let before = Snapshot::take(&repo);
    // The caller holds the project's README open for appending on descriptor 5 when it starts isolate.
    let mut cmd = std::process::Command::new("sh");
    env.apply(&mut cmd);
    cmd.current_dir(&repo)
        .args([
            "-c",
            "exec 5>>README; exec \"$0\" run --worktree -- sh -c 'echo evil >&5; echo attempted'",
            BIN,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = finish(cmd.spawn().unwrap(), LIMIT);
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "attempted\n");
    assert!(
        stderr(&out).contains("Bad file descriptor"),
        "{}",
        stderr(&out)
    );
    before.assert_unchanged(&Snapshot::take(&repo), "inherited descriptor");
}

#[test]
fn write_via_proc_self_root() {
    attempt("echo evil > \"/proc/self/root$ISOLATE_REPO/README\"; echo evil > \"/proc/$$/root$ISOLATE_REPO/README\"");
}

#[test]
fn signal_a_process_outside_the_sandbox() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let mut outside = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = outside.id();
    let out = attempt_in(
        &env,
        &repo,
        &format!("kill -TERM {pid}; kill -KILL {pid}; kill -STOP {pid}"),
    );
    assert!(
        stderr(&out).contains("Operation not permitted"),
        "{}",
        stderr(&out)
    );
    assert!(alive(pid as i32), "the outside process was killed");
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(
        status.contains("State:\tS"),
        "outside process stopped: {status}"
    );
    outside.kill().unwrap();
    outside.wait().unwrap();
}

#[test]
fn the_job_has_no_capabilities_and_no_new_privs() {
    // Meaningful as root (these tests run as root on CI): root's full capability sets must be gone.
    let (_, out) = attempt("grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status");
    let text = stdout(&out);
    for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert!(
            text.contains(&format!("{set}:\t0000000000000000")),
            "{set} not empty: {text}"
        );
    }
    assert!(text.contains("NoNewPrivs:\t1"), "{text}");
}

#[test]
fn make_a_device_node() {
    let (_, out) = attempt("mknod ./null c 1 3; test -e ./null && echo made-device");
    assert!(!stdout(&out).contains("made-device"));
}

#[test]
fn connect_to_an_abstract_unix_socket_outside() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let env = TestEnv::new();
    let repo = env.repo("app");
    let name = format!("isolate-test-{}", std::process::id());
    let listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(&name).unwrap()).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); print('connected')\""
    );
    let out = attempt_in(&env, &repo, &script);
    assert!(!stdout(&out).contains("connected"), "{}", stdout(&out));
    assert!(stderr(&out).contains("PermissionError"), "{}", stderr(&out));
    assert!(
        listener.accept().is_err(),
        "the job reached the outside socket"
    );
}
