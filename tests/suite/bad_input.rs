//! Bad input: every failure names what failed, with the right status, and leaves nothing half-made.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::*;

#[test]
fn a_hostile_name_is_slugged_and_stays_inside_the_state_directory() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = env.path().join("r.json");
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--keep",
            "--name",
            "../../etc/x y",
            "--report",
            report.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    assert_status(&out, 0);
    let value = env.report(&report);
    let id = value["id"].as_str().unwrap();
    assert!(
        id.starts_with("etc-x-y-") && id.len() == "etc-x-y-".len() + 4,
        "{id}"
    );
    assert_eq!(value["name"], "../../etc/x y");
    let path = fs::canonicalize(value["worktree"]["path"].as_str().unwrap()).unwrap();
    assert!(
        path.starts_with(fs::canonicalize(&env.state).unwrap()),
        "{}",
        path.display()
    );
    assert_eq!(value["worktree"]["branch"], format!("isolate/{id}"));
}

#[test]
fn an_unknown_option_of_run_is_125() {
    let env = TestEnv::new();
    let out = env.isolate(env.path(), ["run", "--no-such-option", "--", "true"]);
    assert_status(&out, 125);
    let out = env.isolate(env.path(), ["run", "--timeout", "soon", "--", "true"]);
    assert_status(&out, 125);
    // A bare number is seconds, as timeout(1) reads it: the job is stopped (124).
    let out = env.isolate(
        env.path(),
        ["run", "-q", "--timeout", "0.5", "--", "sleep", "60"],
    );
    assert_status(&out, 124);
    let out = env.isolate(env.path(), ["run"]);
    assert_status(&out, 125);
    let out = env.isolate(env.path(), ["no-such-command"]);
    assert_status(&out, 2);
}

#[test]
fn a_base_that_does_not_resolve_is_125_and_leaves_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = env.isolate(
        &repo,
        ["run", "--worktree", "--base", "no-such-rev", "--", "true"],
    );
    assert_status(&out, 125);
    assert!(stderr(&out).contains("no-such-rev"), "{}", stderr(&out));
    assert!(env.worktree_dirs().is_empty());
    assert!(env.isolate_branches(&repo).is_empty());
    assert!(env.records().is_empty());
    // A base that names something other than a commit is refused too.
    let tree = env.git(&repo, ["rev-parse", "HEAD^{tree}"]);
    let out = env.isolate(&repo, ["run", "--worktree", "--base", &tree, "--", "true"]);
    assert_status(&out, 125);
}

#[test]
fn a_base_is_honoured() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let first = env.git(&repo, ["rev-parse", "HEAD~1"]);
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--base",
            "HEAD~1",
            "--",
            "sh",
            "-c",
            "echo $ISOLATE_BASE; test -e src/lib.txt || echo no-lib",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), format!("{first}\nno-lib\n"));
}

#[test]
fn a_stale_index_lock_in_the_project_does_not_stop_a_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join(".git/index.lock"), "").unwrap();
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--",
            "sh",
            "-c",
            "git commit -q --allow-empty -m w",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(env.isolate_branches(&repo).len(), 1);
    assert!(
        repo.join(".git/index.lock").exists(),
        "isolate removed a lock it did not take"
    );
}

#[test]
fn a_project_path_with_spaces_and_quotes_works() {
    let env = TestEnv::new();
    let repo = env.repo("my app's \"repo\"");
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--",
            "sh",
            "-c",
            "git commit -q --allow-empty -m w && cat README",
        ],
    );
    assert_status(&out, 0);
    assert_eq!(stdout(&out), "hello\n");
    assert_eq!(env.isolate_branches(&repo).len(), 1);
    env.assert_fsck(&repo);
}

#[test]
fn a_project_path_with_a_newline_is_refused_before_git_is_asked() {
    // A project whose path holds a newline and, beneath it, a directory named as a path elsewhere:
    // git's line-per-field answer would be read as another project's fields.
    let env = TestEnv::new();
    let repo = env.repo("app\n/tmp\nevil");
    let out = env.isolate(&repo, ["run", "--worktree", "--", "true"]);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("contains a newline"),
        "{}",
        stderr(&out)
    );
    assert!(env.worktree_dirs().is_empty());
    assert!(env.isolate_branches(&repo).is_empty());
    assert!(env.records().is_empty());
}

#[test]
fn sandbox_unavailable_fails_closed_with_a_hint_and_no_sandbox_runs_on_purpose() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // As on a kernel with Landlock ABI 2 (no truncate control): refused, nothing made.
    let mut cmd = env.isolate_cmd(&repo, ["run", "--worktree", "--", "true"]);
    cmd.env("ISOLATE_LANDLOCK_ABI_MAX", "2");
    let out = finish(cmd.spawn().unwrap(), LIMIT);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("ABI 2") && stderr(&out).contains("--no-sandbox"),
        "{}",
        stderr(&out)
    );
    assert!(env.worktree_dirs().is_empty() && env.records().is_empty());

    // --no-sandbox: the job may write the project, and the report says nothing was enforced.
    let report = env.path().join("r.json");
    let out = env.isolate(
        &repo,
        [
            "run",
            "--no-sandbox",
            "--report",
            report.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo ok > unsandboxed.txt",
        ],
    );
    assert_status(&out, 0);
    assert!(repo.join("unsandboxed.txt").exists());
    let value = env.report(&report);
    assert_eq!(value["sandbox"]["enforced"], false);
    assert!(value["sandbox"]["gaps"][0]
        .as_str()
        .unwrap()
        .contains("--no-sandbox"));
    assert!(stderr(&out).contains("UNSANDBOXED"), "{}", stderr(&out));
}

#[test]
fn on_an_older_abi_the_missing_scopes_are_listed_as_gaps() {
    let env = TestEnv::new();
    let report = env.path().join("r.json");
    let mut cmd = env.isolate_cmd(
        env.path(),
        ["run", "--report", report.to_str().unwrap(), "--", "true"],
    );
    cmd.env("ISOLATE_LANDLOCK_ABI_MAX", "5");
    let out = finish(cmd.spawn().unwrap(), LIMIT);
    assert_status(&out, 0);
    let value = env.report(&report);
    assert_eq!(value["sandbox"]["landlock_abi"], 5);
    let gaps = value["sandbox"]["gaps"].to_string();
    // Without Landlock's scopes the seccomp layer holds both: its broker judges every signal to
    // another process and every connect to an abstract name.
    assert!(
        !gaps.contains("signals") && !gaps.contains("abstract unix"),
        "{gaps}"
    );
    // Without the seccomp layer too, both are gaps (default makes the layer required: a run with
    // a policy that makes it best effort).
    let policy = env.path().join("weak.toml");
    std::fs::write(
        &policy,
        "extends = \"default\"\n[compatibility]\nseccomp = \"best_effort\"\n",
    )
    .unwrap();
    let mut cmd = env.isolate_cmd(
        env.path(),
        [
            "run",
            "--policy",
            policy.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    cmd.env("ISOLATE_LANDLOCK_ABI_MAX", "5")
        .env("ISOLATE_NO_SECCOMP", "1");
    let out = finish(cmd.spawn().unwrap(), LIMIT);
    assert_status(&out, 0);
    let gaps = env.report(&report)["sandbox"]["gaps"].to_string();
    assert!(
        gaps.contains("signals")
            && gaps.contains("abstract unix")
            && gaps.contains("no seccomp layer"),
        "{gaps}"
    );
}

#[test]
fn a_typo_in_a_policy_file_is_125_naming_the_key() {
    let env = TestEnv::new();
    let policy = env.path().join("mine.toml");
    fs::write(
        &policy,
        "[filesystem]\nread = [\"/\"]\nwirte = [\"/tmp\"]\n",
    )
    .unwrap();
    let out = env.isolate(
        env.path(),
        ["run", "--policy", policy.to_str().unwrap(), "--", "true"],
    );
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("wirte") && stderr(&out).contains("mine.toml"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_variable_a_policy_sets_with_a_nul_byte_is_125_in_the_foreground_and_the_background() {
    // No environment can hold it: the job does not start, and it is the setup that failed (125),
    // not CMD that cannot be executed (126), whichever process enters the sandbox.
    let env = TestEnv::new();
    let policy = env.file(
        "nul.toml",
        "extends = \"default\"\n[environment]\nset = { X = \"a\\u0000b\" }\n",
    );
    let policy = policy.to_str().unwrap();
    let marker = env.path().join("ran");
    let script = format!("touch {}", marker.display());
    for bg in [false, true] {
        let mut args = vec!["run", "-q", "--policy", policy];
        if bg {
            args.push("--bg");
        }
        args.extend(["--", "sh", "-c", &script]);
        let out = env.isolate(env.path(), &args);
        assert_status(&out, 125);
        assert!(stderr(&out).contains("NUL byte"), "{}", stderr(&out));
    }
    assert!(!marker.exists());
}

#[test]
fn a_policy_that_names_a_device_or_a_fifo_is_refused_at_once() {
    let env = TestEnv::new();
    let policy = env.path().join("zero.toml");
    fs::write(&policy, "extends = \"/dev/zero\"\n").unwrap();
    let out = env.isolate(
        env.path(),
        ["run", "--policy", policy.to_str().unwrap(), "--", "true"],
    );
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );
    let fifo = env.path().join("fifo.toml");
    nix_mkfifo(&fifo);
    let out = env.isolate(
        env.path(),
        ["run", "--policy", fifo.to_str().unwrap(), "--", "true"],
    );
    assert_status(&out, 125);
}

fn nix_mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn allow_write_refuses_what_the_sandbox_protects_and_names_what_it_grants() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir_all(repo.join("target")).unwrap();
    fs::create_dir_all(env.state.join("worktrees")).unwrap();
    let free = env.path().join("free");
    fs::create_dir(&free).unwrap();
    let git = repo.join(".git");
    let hooks = repo.join(".git/hooks");
    let target = repo.join("target");
    let refused: Vec<(&Path, bool)> = vec![
        (Path::new("/"), false),
        (env.path(), false),
        (&repo, false),
        (&git, false),
        (&hooks, false),
        (&env.state, false),
        (&env.state, true),
        (&repo, true),
        // With --worktree the project's checkout is never the job's, a directory of it neither.
        (&target, true),
    ];
    for (path, worktree) in &refused {
        let mut args = vec!["run"];
        if *worktree {
            args.push("--worktree");
        }
        let p = path.to_str().unwrap();
        args.extend(["--allow-write", p, "--", "true"]);
        let before = env.records().len();
        let out = env.isolate(&repo, &args);
        assert_status(&out, 125);
        assert!(
            stderr(&out).contains("--allow-write") && stderr(&out).contains("never opens it"),
            "{p}: {}",
            stderr(&out)
        );
        assert_eq!(env.records().len(), before, "{p}: a job was left behind");
    }
    assert!(env.worktree_dirs().is_empty());
    // Without --worktree a directory of the checkout is what the option is for; it is named.
    let report = env.path().join("r.json");
    let out = env.isolate(
        &repo,
        [
            "run",
            "--allow-write",
            "target",
            "--allow-write",
            free.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "touch target/built \"$0/x\"",
            free.to_str().unwrap(),
        ],
    );
    assert_status(&out, 0);
    assert!(repo.join("target/built").exists() && free.join("x").exists());
    assert!(
        stderr(&out).contains("writable as asked (--allow-write)"),
        "{}",
        stderr(&out)
    );
    let granted = env.report(&report)["sandbox"]["allow_write"].to_string();
    assert!(
        granted.contains("target") && granted.contains("free"),
        "{granted}"
    );
}

#[test]
fn a_tool_stuck_on_a_read_only_home_gets_a_hint_naming_only_what_exists() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // An unknown tool that keeps its state in ~/.mytool: it fails, and the end says how to grant it.
    let bin = env.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("mytool");
    fs::write(
        &tool,
        "#!/bin/sh\nmkdir -p \"$HOME/.mytool\" && echo state > \"$HOME/.mytool/db\" || exit 3\n",
    )
    .unwrap();
    fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--worktree"];
        args.extend_from_slice(extra);
        args.extend(["--", "mytool"]);
        env.isolate_with(&repo, &[("PATH", &path)], &args)
    };
    // Nothing of it there yet: no hint names a directory that does not exist (a failed `bash`
    // would be told of `~/.bash`).
    let out = run(&[]);
    assert_status(&out, 3);
    let said = stderr(&out);
    assert!(!said.contains("~/.mytool"), "{said}");
    // Once the directory exists, the hint names it and the flag that grants it.
    fs::create_dir(env.home.join(".mytool")).unwrap();
    let out = run(&[]);
    assert_status(&out, 3);
    assert!(
        stderr(&out).contains("could not write ~/.mytool")
            && stderr(&out).contains("--allow-write ~/.mytool grants it"),
        "{}",
        stderr(&out)
    );
    let granted = env.home.join(".mytool");
    let out = run(&["--allow-write", granted.to_str().unwrap()]);
    assert_status(&out, 0);
    assert!(!stderr(&out).contains("hint:"), "{}", stderr(&out));

    // --allow-write of a path that does not exist says how to make it, and nothing is left.
    let missing = env.home.join("no such dir");
    let out = run(&["--allow-write", missing.to_str().unwrap()]);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("it does not exist; create it first (mkdir -p '")
            && stderr(&out).contains("missing = \"create\""),
        "{}",
        stderr(&out)
    );
    assert!(env.worktree_dirs().is_empty());
}

/// A reader that went away (`isolate ps --all | head -2`) ends every listing command quietly with
/// status 0: no panic (status 101), no error. The pipe's read end is closed before isolate starts,
/// so its first write fails with EPIPE whatever the timing.
#[test]
fn a_closed_reader_ends_every_listing_command_quietly() {
    use std::os::fd::OwnedFd;
    use std::process::Stdio;
    let env = TestEnv::new();
    let repo = env.repo("app");
    for _ in 0..3 {
        assert_status(&env.isolate(&repo, ["run", "--", "true"]), 0);
    }
    let (out, report) = env.worktree_job(&repo, &["--keep"], "true");
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap().to_string();
    let background = env.isolate(&repo, ["run", "--bg", "--", "sh", "-c", "seq 1 2000"]);
    assert_status(&background, 0);
    let bg_id = stdout(&background).trim().to_string();
    assert_status(&env.isolate(&repo, ["wait", &bg_id]), 0);
    for args in [
        vec!["ps", "--all"],
        vec!["ps", "--all", "--json"],
        vec!["status", &id],
        vec!["status", &id, "--json"],
        vec!["worktrees"],
        vec!["worktrees", "--json"],
        vec!["prune", "--dry-run"],
        vec!["logs", &bg_id],
        vec!["doctor"],
        vec!["policy", "show", "default"],
        vec!["run", "--bg", "--", "true"],
        vec!["run", "--bg", "--json", "--", "true"],
    ] {
        let (read, write): (OwnedFd, OwnedFd) = nix_pipe();
        drop(read);
        let out = env
            .isolate_cmd(&repo, &args)
            .stdout(Stdio::from(write))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "isolate {args:?} with a closed reader: {err}"
        );
        assert!(!err.contains("panicked"), "isolate {args:?}: {err}");
        assert!(!err.contains("error"), "isolate {args:?}: {err}");
    }
}

/// A pipe whose read end the test can close.
fn nix_pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills both entries on success; each is owned right after.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: both descriptors are fresh and owned by nothing else.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

/// `worktree_root` may not put a job's files into a git directory (the project's, through a
/// relative path, a `..`, a link, or another repository's) nor into isolate's state outside its
/// worktrees: a job's files there would be the project's refs. Refused (125) naming the setting,
/// before anything is made; the project's refs and git directory are unchanged.
#[test]
fn a_worktree_root_in_a_git_directory_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let other = env.repo("other");
    std::os::unix::fs::symlink(".git/refs", repo.join("refs-link")).unwrap();
    let state = env.path().join("state");
    for root in [
        ".git/refs/heads".to_string(),
        "new/../.git/refs".to_string(),
        "refs-link/isolate".to_string(),
        ".git".to_string(),
        other.join(".git/refs").display().to_string(),
        state.join("jobs").display().to_string(),
    ] {
        fs::write(
            repo.join(".isolate.toml"),
            format!("worktree_root = \"{root}\"\n"),
        )
        .unwrap();
        let refs_before = env.git(&repo, ["for-each-ref"]);
        let entries_before = fs::read_dir(repo.join(".git/refs/heads")).unwrap().count();
        let out = env.isolate(
            &repo,
            ["run", "--worktree", "--", "sh", "-c", "echo x > deadbeef"],
        );
        assert_status(&out, 125);
        let err = stderr(&out);
        assert!(
            err.contains("worktree_root") && err.contains("may not go there"),
            "{root}: {err}"
        );
        assert_eq!(env.git(&repo, ["for-each-ref"]), refs_before, "{root}");
        assert_eq!(
            fs::read_dir(repo.join(".git/refs/heads")).unwrap().count(),
            entries_before
        );
        assert!(!repo.join("new").exists(), "{root}");
        env.assert_fsck(&repo);
    }
}

/// `worktree_root` may not lie inside a job's worktree (kept, here): that job can write there, so
/// every worktree made under it would be the other job's to change. Refused (125) naming the
/// setting and the job's worktree; nothing is made there.
#[test]
fn a_worktree_root_inside_a_jobs_worktree_is_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = env.worktree_job(&repo, &["--keep"], "true");
    assert_status(&out, 0);
    let kept = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    for root in [kept.join("nested"), kept.join(".git/../x")] {
        fs::write(
            repo.join(".isolate.toml"),
            format!("worktree_root = \"{}\"\n", root.display()),
        )
        .unwrap();
        let before = fs::read_dir(&kept).unwrap().count();
        let out = env.isolate(&repo, ["run", "--worktree", "--", "true"]);
        assert_status(&out, 125);
        let err = stderr(&out);
        assert!(
            err.contains("worktree_root") && err.contains("inside the job worktree"),
            "{}: {err}",
            root.display()
        );
        assert_eq!(fs::read_dir(&kept).unwrap().count(), before);
    }
}

/// The job writes everything in its worktree, its mark too: one that removed `[isolate]` from its
/// `.git/config`, or made a repository of its own inside (whose config has no mark, and which is the
/// nearest `.git` above the root), still holds the root out.
#[test]
fn a_worktree_root_inside_a_jobs_worktree_is_refused_whatever_the_job_left() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (script, inner) in [
        ("git config --remove-section isolate", "nested"),
        ("git init -q sub", "sub/roots"),
    ] {
        let (out, report) = env.worktree_job(&repo, &["--keep"], script);
        assert_status(&out, 0);
        let kept = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
        let root = kept.join(inner);
        fs::write(
            repo.join(".isolate.toml"),
            format!("worktree_root = \"{}\"\n", root.display()),
        )
        .unwrap();
        let out = env.isolate(&repo, ["run", "--worktree", "--", "true"]);
        assert_status(&out, 125);
        assert!(
            stderr(&out).contains("worktree_root"),
            "{script}: {}",
            stderr(&out)
        );
        assert!(!root.exists(), "{script}");
        fs::remove_file(repo.join(".isolate.toml")).unwrap();
    }
}

/// The cleanup's inspection reads the job's objects in isolate's own process, without the import's
/// memory bound: a tree naming the same subtree 170 times, three levels deep (a few KiB of
/// objects), expanded to 4.9 million paths of an index (four levels of 300: 8.1 billion, 3.9 GB
/// and two minutes before a timeout ended it), and a 100 KB loose object inflated to 100 MB
/// (3 MB to 3 GB, for every `isolate worktrees`). Both now stop at the inspection's bounds before
/// anything is expanded: the worktree is kept, its reason names the bound.
#[test]
fn objects_that_expand_past_the_inspections_bounds_keep_the_worktree_unread() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let tree_bomb = "b=$(echo x | git hash-object -w --stdin); \
         t=$(for i in $(seq 1 170); do printf '100644 blob %s\\tf%s\\n' $b $i; done | git mktree); \
         for l in 1 2; do t=$(for i in $(seq 1 170); do printf '040000 tree %s\\td%s\\n' $t $i; done | git mktree); done; \
         git reset -q --soft $(git commit-tree $t -p HEAD -m bomb)";
    let zlib_bomb = "python3 -c 'import zlib,os\n\
         c=zlib.compressobj(9); d=[c.compress(b\"tree 100000000\\0\")]\n\
         d+=[c.compress(bytes(1<<20)) for _ in range(95)]; d.append(c.compress(bytes(100000000-95*(1<<20)))); d.append(c.flush())\n\
         os.makedirs(\".git/objects/ab\", exist_ok=True); open(\".git/objects/ab/\"+\"cd\"*19,\"wb\").write(b\"\".join(d))' && \
         git reset -q --soft $(git commit-tree ab$(printf 'cd%.0s' $(seq 1 19)) -p HEAD -m bomb)";
    for (what, script, said) in [
        ("tree bomb", tree_bomb, "paths"),
        ("zlib bomb", zlib_bomb, "bytes, over the"),
    ] {
        let started = std::time::Instant::now();
        let (out, report) = env.worktree_job(&repo, &[], script);
        assert_status(&out, 0);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{what}: {report}");
        let reason = wt["reason"].as_str().unwrap_or_default();
        assert!(reason.contains(said), "{what}: {reason}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{what}: {:?}",
            started.elapsed()
        );
        env.assert_fsck(&repo);
    }
}

/// A record edited to say that a running job ended, or a copy of it under another job's name:
/// `rm` removed the running job's worktree, branch and record from under it, and its work was
/// lost. Nothing is removed while the supervisor a record names runs, and a record lies only in
/// the directory named after its job.
#[test]
fn a_record_that_says_a_running_job_ended_has_nothing_removed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = env.isolate(&repo, ["run", "--bg", "--worktree", "--", "sleep", "60"]);
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let dir = env.state.join("jobs").join(&id);
    let original = fs::read_to_string(dir.join("job.json")).unwrap();
    let mut record: serde_json::Value = serde_json::from_str(&original).unwrap();
    let worktree = PathBuf::from(record["worktree"]["path"].as_str().unwrap());
    record["state"] = "exited".into();
    record["exit"] = serde_json::json!({"code": 0, "signal": null});
    record["ended_at"] = record["started_at"].clone();
    let edited = serde_json::to_string(&record).unwrap();
    fs::write(dir.join("job.json"), &edited).unwrap();
    let copy = env.state.join("jobs/copy-2424");
    fs::create_dir_all(&copy).unwrap();
    fs::write(copy.join("job.json"), &edited).unwrap();

    let out = env.isolate(env.path(), ["rm", &id]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("still runs"), "{}", stderr(&out));
    let out = env.isolate(env.path(), ["rm", "copy-2424"]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("another job"), "{}", stderr(&out));
    assert!(
        worktree.join(".git").exists(),
        "the running job's worktree went"
    );
    assert!(dir.join("job.json").exists());
    let branch = format!("refs/heads/isolate/{id}");
    assert!(env
        .git_output(&repo, ["rev-parse", "--verify", "--quiet", &branch])
        .status
        .success());

    fs::write(dir.join("job.json"), &original).unwrap();
    assert_status(&env.isolate(env.path(), ["stop", &id]), 0);
}

/// Bad values caught before anything runs: an empty job name (a prefix of every id: an unset
/// variable in `isolate rm "$JOB"` named the one job there was), a duration past the clock's
/// reach (the supervisor panicked after CMD had started, and left the job lost), a report that
/// cannot be written (found only after the job had run, and the status was 0); and a name that
/// holds a newline cannot forge a line of `status`.
#[test]
fn bad_values_are_refused_before_anything_runs() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for command in ["rm", "stop", "status", "wait", "logs"] {
        let out = env.isolate(env.path(), [command, ""]);
        assert_status(&out, 2);
    }
    let marker = env.path().join("ran");
    let touch = format!("touch {}", marker.display());
    for args in [
        vec!["--timeout", "18446744073709551615s"],
        vec!["--timeout", "1s", "--grace", "300000000000years"],
        vec!["--report", "/nonexistent/dir/report.json"],
        vec!["--report", "/tmp"],
    ] {
        let mut all = vec!["run", "--worktree"];
        all.extend(&args);
        all.extend(["--", "sh", "-c", &touch]);
        let out = env.isolate(&repo, &all);
        assert_status(&out, 125);
        assert!(!marker.exists(), "{args:?} ran CMD");
    }
    assert!(env.records().is_empty());
    assert!(env.worktree_dirs().is_empty());
    // A descriptor named through /dev is the caller's, whatever /dev's own mode (found in review:
    // an ordinary user's `--report /dev/stdout > file` was refused for want of writing /dev).
    let out = env.as_ordinary_user(
        "\"$ISOLATE\" run -q --report /dev/stdout -- true > report.json; echo rc=$?; \
         grep -c '\"schema\"' report.json",
    );
    assert!(
        stdout(&out).contains("rc=0\n1"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let out = env.isolate(
        &repo,
        [
            "run",
            "-q",
            "--name",
            "fake\nstate:    running\u{202e}",
            "--",
            "true",
        ],
    );
    assert_status(&out, 0);
    let status = stdout(&env.isolate(env.path(), ["status", "fake"]));
    assert!(
        !status.contains("\nstate:    running") && !status.contains('\u{202e}'),
        "{status}"
    );
}

/// Records and logs isolate wrote, replaced by something else (a FIFO, a link elsewhere): a
/// FIFO for a record hung every listing, and a link for a log printed the file it named.
#[test]
fn a_fifo_or_a_link_where_a_record_or_a_log_was_neither_hangs_nor_shows_another_file() {
    let env = TestEnv::new();
    let out = env.isolate(env.path(), ["run", "--bg", "--", "echo", "logged"]);
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    assert_status(&env.isolate(env.path(), ["wait", &id]), 0);
    let secret = env.path().join("secret.txt");
    fs::write(&secret, "not the job's\n").unwrap();
    let log = env.state.join("jobs").join(&id).join("output.log");
    fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&secret, &log).unwrap();
    let out = env.isolate(env.path(), ["logs", &id]);
    assert!(!stdout(&out).contains("not the job's"), "{}", stdout(&out));
    let fifo = env.state.join("jobs/fifo-0004");
    fs::create_dir_all(&fifo).unwrap();
    nix_mkfifo(&fifo.join("job.json"));
    for args in [
        vec!["ps", "--all"],
        vec!["worktrees"],
        vec!["status", "fif"],
    ] {
        let cmd = env
            .isolate_cmd(env.path(), &args)
            .stdin(std::process::Stdio::null())
            .spawn();
        let out = finish(cmd.unwrap(), Duration::from_secs(20));
        assert_ne!(out.status.code(), None, "{args:?}");
    }
}

/// A record that names a cgroup isolate did not make for that job (another name, or its name
/// through a link): `prune`, `stop` and `rm --force` killed every process in it and removed it.
/// Only a cgroup named after the record's job, reached through no link, is the job's.
#[test]
fn a_record_naming_another_cgroup_has_nothing_there_signalled() {
    // Needs root to make a cgroup (CI runs as root).
    let env = TestEnv::new();
    let mount = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .into_iter()
        .map(PathBuf::from)
        .find(|m| m.join("cgroup.procs").is_file())
        .expect("a cgroup v2 hierarchy");
    let parent = mount.join(format!("isolate-test-{}", std::process::id()));
    let other = parent.join("isolate-notmine");
    fs::create_dir_all(&other).unwrap();
    struct Cleanup(std::process::Child, PathBuf, PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
            let _ = fs::remove_dir(&self.1);
            let _ = fs::remove_dir(&self.2);
        }
    }
    let canary = std::process::Command::new("sleep")
        .arg("120")
        .spawn()
        .unwrap();
    let canary_pid = canary.id() as i32;
    let _cleanup = Cleanup(canary, other.clone(), parent.clone());
    fs::write(other.join("cgroup.procs"), canary_pid.to_string()).unwrap();

    let out = env.isolate(env.path(), ["run", "-q", "--", "true"]);
    assert_status(&out, 0);
    let real = env.records().into_iter().next().unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let link = env.path().join("isolate-cgfake-9999");
    std::os::unix::fs::symlink(&other, &link).unwrap();
    for (id, cgroup) in [("cgfake-8888", other.clone()), ("cgfake-9999", link)] {
        let mut record = real.clone();
        record["id"] = id.into();
        record["name"] = serde_json::Value::Null;
        record["state"] = "running".into();
        record["exit"] = serde_json::Value::Null;
        record["ended_at"] = serde_json::Value::Null;
        record["supervisor_pid"] = dead.into();
        record["supervisor_start"] = 1.into();
        record["pid"] = dead.into();
        record["pid_start"] = 1.into();
        record["cgroup"] = cgroup.display().to_string().into();
        let dir = env.state.join("jobs").join(id);
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("job.json"),
            serde_json::to_string(&record).unwrap(),
        )
        .unwrap();
        for args in [vec!["prune"], vec!["stop", id], vec!["rm", "--force", id]] {
            env.isolate(env.path(), &args);
            assert!(
                alive(canary_pid),
                "{id}: {args:?} killed a process of another cgroup"
            );
            assert!(other.is_dir(), "{id}: {args:?} removed another cgroup");
        }
    }
}
