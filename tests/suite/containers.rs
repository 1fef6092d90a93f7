//! isolate where agents run beyond a laptop: inside a container's user and pid namespaces as an
//! ordinary user, the way a container or a pod runs it (bubblewrap makes them here), with the
//! container's own `/proc` and with a `/proc` of another pid namespace (`bwrap --unshare-pid`
//! without `--proc`): the whole lifecycle works, and nothing waits out a grace period.

use crate::support::*;

/// A job that commits, a background job waited for, one stopped: run in `dir` by `$ISOLATE`.
const LIFECYCLE: &str = "set -e\n\
cd \"$1\" && rm -rf proj && git init -q proj && cd proj\n\
git -c user.name=u -c user.email=u@x commit -q --allow-empty -m init\n\
export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=u GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1=u@x\n\
\"$ISOLATE\" run -q --grace 10m --worktree -- sh -c 'echo hi > f && git add f && git commit -qm f'\n\
echo \"branches $(git branch --list 'isolate/*' | wc -l)\"\n\
id=$(\"$ISOLATE\" run --bg --grace 10m --worktree -- sh -c 'exit 3')\n\
\"$ISOLATE\" wait \"$id\" || echo \"wait status $?\"\n\
id=$(\"$ISOLATE\" run --bg --grace 10m -- sleep 600)\n\
\"$ISOLATE\" stop \"$id\" && echo stopped\n\
\"$ISOLATE\" ps --json | grep -c '\"state\": \"running\"' || true\n";

#[test]
fn the_whole_lifecycle_runs_in_a_containers_user_and_pid_namespaces_without_delay() {
    let env = TestEnv::new();
    std::fs::write(env.path().join("lifecycle.sh"), LIFECYCLE).unwrap();
    for proc_mount in ["--proc /proc", ""] {
        let out = env.as_ordinary_user(&format!(
            "bwrap --dev-bind / / {proc_mount} --unshare-user --unshare-pid -- \
             sh \"$PWD/lifecycle.sh\" \"$PWD\""
        ));
        let text = stdout(&out);
        assert_status(&out, 0);
        for line in ["branches 1", "wait status 3", "stopped"] {
            assert!(text.contains(line), "{proc_mount}: {text}{}", stderr(&out));
        }
        // Nothing left running. Every job's grace period is ten minutes: a stop that waited one
        // out (the tree not found where `/proc` is another namespace's) would outlast the test.
        assert!(text.trim_end().ends_with('0'), "{text}");
    }
}

/// `tests/data/kernel-without.c`, built: runs a command on a kernel without Landlock or without
/// seccomp's listener, answering as gVisor answers (ENOSYS; EINVAL for the listener flag).
fn kernel_without(env: &TestEnv) -> String {
    let bin = env.path().join("kernel-without");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kernel-without.c");
    let built = std::process::Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&bin)
        .arg(source)
        .status()
        .unwrap();
    assert!(built.success());
    bin.display().to_string()
}

#[test]
fn where_the_sandbox_cannot_exist_isolate_says_so_before_anything_runs() {
    let env = TestEnv::new();
    let without = kernel_without(&env);
    let out_dir = env.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let marker = out_dir.join("ran");
    let run = |missing: &str, extra: &[&str]| {
        // The job may write where the marker goes: no marker is the command never run.
        let mut args = vec![
            missing,
            "--",
            BIN,
            "run",
            "--allow-write",
            out_dir.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let touch = format!("touch {}", marker.display());
        args.extend(["--", "sh", "-c", &touch]);
        let mut cmd = std::process::Command::new(&without);
        env.apply(&mut cmd);
        cmd.args(&args).current_dir(env.path());
        finish(piped(&mut cmd).spawn().unwrap(), LIMIT)
    };
    // Neither Landlock nor the listener (gVisor): doctor names both and what to do; run is 125.
    let mut cmd = std::process::Command::new(&without);
    env.apply(&mut cmd);
    cmd.args(["landlock,notify", "--", BIN, "doctor"]);
    let doctor = finish(piped(&mut cmd).spawn().unwrap(), LIMIT);
    assert_status(&doctor, 1);
    let text = stdout(&doctor);
    assert!(
        text.contains("landlock      none: this kernel has no Landlock"),
        "{text}"
    );
    assert!(text.contains("seccomp       NOT available"), "{text}");
    assert!(
        text.contains("remedy        ") && text.contains("runc"),
        "{text}"
    );
    for missing in ["landlock,notify", "landlock", "notify"] {
        let out = run(missing, &[]);
        assert_status(&out, 125);
        assert!(!marker.exists(), "{missing}: the command ran");
    }
    assert!(stderr(&run("notify", &[])).contains("NEW_LISTENER refused"));
    // A policy that marks the seccomp layer best effort runs without it, and says so.
    let policy = env.file(
        "lenient.toml",
        "extends = \"default\"\n[compatibility]\nseccomp = \"best_effort\"\n",
    );
    let report = env.path().join("report.json");
    let out = run(
        "notify",
        &[
            "--policy",
            policy.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ],
    );
    assert_status(&out, 0);
    assert!(marker.exists());
    let gaps = env.report(&report)["sandbox"]["gaps"].to_string();
    assert!(gaps.contains("no seccomp layer"), "{gaps}");
}

fn piped(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::process::Stdio;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
}

#[test]
fn push_sends_the_imported_branch_to_the_remote_and_a_failure_keeps_everything() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let remote = env.path().join("remote.git");
    env.git(
        env.path(),
        ["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    env.git(&repo, ["remote", "add", "origin", remote.to_str().unwrap()]);
    let (out, report) = env.worktree_job(
        &repo,
        &["--push", "origin"],
        "echo x > x && git add x && git commit -qm x",
    );
    assert_status(&out, 0);
    let branch = report["worktree"]["branch"].as_str().unwrap().to_string();
    assert_eq!(report["worktree"]["push"]["pushed"], true, "{report}");
    assert!(
        stderr(&out).contains(&format!("pushed:   {branch} to origin")),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        env.git(&remote, ["rev-parse", &branch]),
        env.git(&repo, ["rev-parse", &branch])
    );
    // A remote that refuses: the job's status stands, the branch and its commits stay, the
    // report says why.
    let (out, report) = env.worktree_job(
        &repo,
        &["--push", "nowhere"],
        "echo y > y && git add y && git commit -qm y",
    );
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["push"]["pushed"], false, "{report}");
    assert!(report["worktree"]["push"]["error"]
        .as_str()
        .is_some_and(|e| !e.is_empty()));
    let branch = report["worktree"]["branch"].as_str().unwrap();
    assert!(env.branches(&repo).iter().any(|b| b == branch));
    assert!(
        stderr(&out).contains("failed, everything kept"),
        "{}",
        stderr(&out)
    );
    // Not an option to git.
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--push",
            "--upload-pack=x",
            "--",
            "true",
        ],
    );
    assert_status(&out, 125);
}

#[test]
fn the_container_image_runs_an_agent_and_pushes_its_branch_as_an_ordinary_user() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    // The build file: a Debian base, isolate and git, an ordinary user, the entrypoint it copies.
    let file = std::fs::read_to_string(root.join("Containerfile")).unwrap();
    let lines: Vec<&str> = file.lines().filter(|l| !l.starts_with('#')).collect();
    let last_from = lines.iter().rposition(|l| l.starts_with("FROM ")).unwrap();
    assert!(lines[last_from].contains("debian:"), "{}", lines[last_from]);
    let image = &lines[last_from..];
    assert!(image.iter().any(|l| l.starts_with("USER 1000")), "{file}");
    assert!(image
        .iter()
        .any(|l| l.contains("git") && l.contains("apt-get install")));
    assert!(image
        .iter()
        .any(|l| l.starts_with("COPY deploy/entrypoint.sh /usr/local/bin/isolate-entrypoint")));
    assert!(image
        .iter()
        .any(|l| l.starts_with("ENTRYPOINT [\"/usr/local/bin/isolate-entrypoint\"]")));
    for forbidden in ["--privileged", "cap-add", "CAP_", "setuid", "chmod u+s"] {
        assert!(!file.contains(forbidden), "{forbidden}");
    }
    for manifest in ["job.yaml", "sandbox-template.yaml"] {
        let text = std::fs::read_to_string(root.join("kubernetes").join(manifest)).unwrap();
        assert!(text.contains("drop: [\"ALL\"]") && text.contains("runAsNonRoot: true"));
        assert!(
            text.contains("allowPrivilegeEscalation: false"),
            "{manifest}"
        );
        assert!(!text.contains("privileged: true"), "{manifest}");
    }
    // Its entrypoint, run as the image runs it: an ordinary user in a user and pid namespace of
    // its own, against a repository served from a bare one (the remote), isolate on PATH.
    let env = TestEnv::new();
    let origin = env.path().join("origin.git");
    let seed = env.repo("seed");
    env.git(
        env.path(),
        [
            "clone",
            "-q",
            "--bare",
            seed.to_str().unwrap(),
            origin.to_str().unwrap(),
        ],
    );
    std::fs::copy(root.join("entrypoint.sh"), env.path().join("entrypoint.sh")).unwrap();
    let out = env.as_ordinary_user(&format!(
        "mkdir -p bin home && cp \"$ISOLATE\" bin/isolate && \
         HOME=\"$PWD/home\" PATH=\"$PWD/bin:$PATH\" REPO_URL={origin} \
         AGENT='echo done > done.txt && git add done.txt && git commit -qm done' \
         WORKDIR=\"$PWD/home/work\" \
         bwrap --dev-bind / / --proc /proc --unshare-user --unshare-pid -- sh \"$PWD/entrypoint.sh\"",
        origin = origin.display()
    ));
    assert_status(&out, 0);
    // (The test's directory is the ordinary user's now: root's git reads it as such.)
    let branches = env.git(
        &origin,
        [
            "-c",
            "safe.directory=*",
            "branch",
            "--list",
            "isolate/*",
            "--format=%(refname:short)",
        ],
    );
    assert_eq!(branches.lines().count(), 1, "{branches}\n{}", stderr(&out));
    let shown = env.git(
        &origin,
        [
            "-c",
            "safe.directory=*",
            "show",
            &format!("{}:done.txt", branches.trim()),
        ],
    );
    assert_eq!(shown, "done");
}
