//! Starting points fetched from the project's remote: `--pr` (GitHub's `refs/pull/N/head` and
//! GitLab's `refs/merge-requests/N/head` layouts) and `--base fresh` (the remote's default branch),
//! against a local "origin" made by the test.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::*;

/// A bare origin with `main` and two requests (`refs/pull/7/head`, `refs/merge-requests/8/head`),
/// and the project cloned from it. Returns (project, origin, PR 7's commit, MR 8's commit).
fn forge(env: &TestEnv) -> (PathBuf, PathBuf, String, String) {
    let upstream = env.repo("upstream");
    let origin = env.path().join("origin.git");
    env.git(
        env.path(),
        [
            "clone",
            "-q",
            "--bare",
            upstream.to_str().unwrap(),
            origin.to_str().unwrap(),
        ],
    );
    let mut heads = Vec::new();
    for (name, file) in [
        ("refs/pull/7/head", "seven.txt"),
        ("refs/merge-requests/8/head", "eight.txt"),
    ] {
        fs::write(upstream.join(file), format!("{name}\n")).unwrap();
        env.git(&upstream, ["add", file]);
        env.git(&upstream, ["commit", "-q", "-m", file]);
        let commit = env.git(&upstream, ["rev-parse", "HEAD"]).trim().to_string();
        env.git(
            &upstream,
            [
                "push",
                "-q",
                origin.to_str().unwrap(),
                &format!("HEAD:{name}"),
            ],
        );
        env.git(&upstream, ["reset", "-q", "--hard", "HEAD~1"]);
        heads.push(commit);
    }
    let project = env.path().join("app");
    env.git(
        env.path(),
        [
            "clone",
            "-q",
            origin.to_str().unwrap(),
            project.to_str().unwrap(),
        ],
    );
    (project, origin, heads.remove(0), heads.remove(0))
}

/// Another clone of `origin`, to push to it as someone else would.
fn clone_of(env: &TestEnv, origin: &Path) -> PathBuf {
    let other = env.path().join("other");
    env.git(
        env.path(),
        [
            "clone",
            "-q",
            origin.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    other
}

fn base_of(
    env: &TestEnv,
    project: &Path,
    args: &[&str],
) -> (std::process::Output, serde_json::Value) {
    let report = env.path().join("report.json");
    let _ = fs::remove_file(&report);
    let mut all = vec![
        "run",
        "--worktree",
        "--keep",
        "--report",
        report.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", "true"]);
    let out = env.isolate(project, &all);
    let report = fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (out, report)
}

#[test]
fn a_pull_or_merge_request_is_fetched_and_the_worktree_cut_at_its_head() {
    let env = TestEnv::new();
    let (project, _origin, seven, eight) = forge(&env);
    let refs_before = env.git(&project, ["for-each-ref"]);
    for (pr, head, number) in [
        ("7", &seven, 7),
        ("#7", &seven, 7),
        ("https://github.com/acme/app/pull/7", &seven, 7),
        ("https://gitlab.com/acme/app/-/merge_requests/8", &eight, 8),
        ("8", &eight, 8),
    ] {
        let (out, report) = base_of(&env, &project, &["--pr", pr]);
        assert_status(&out, 0);
        let wt = &report["worktree"];
        assert_eq!(wt["base"].as_str(), Some(head.as_str()), "{pr}: {report}");
        assert_eq!(wt["pull_request"], number, "{pr}: {report}");
        assert!(
            report["id"]
                .as_str()
                .unwrap()
                .starts_with(&format!("pr-{number}-")),
            "{pr}: {report}"
        );
        assert!(
            stderr(&out).contains(&format!("pull request #{number}")),
            "{}",
            stderr(&out)
        );
        let path = PathBuf::from(wt["path"].as_str().unwrap());
        let file = if number == 7 {
            "seven.txt"
        } else {
            "eight.txt"
        };
        assert!(path.join(file).is_file(), "{pr}");
    }
    let ps = env.isolate(&project, ["ps", "--all"]);
    assert!(stdout(&ps).contains("[PR #8] true"), "{}", stdout(&ps));
    // No ref of the project's moved but the jobs' own.
    let after: Vec<String> = env
        .git(&project, ["for-each-ref", "--format=%(refname)"])
        .lines()
        .filter(|r| !r.starts_with("refs/heads/isolate/") && !r.starts_with("refs/isolate/"))
        .map(str::to_string)
        .collect();
    let before: Vec<String> = refs_before
        .lines()
        .map(|l| l.split_whitespace().last().unwrap().to_string())
        .collect();
    assert_eq!(after, before);
    env.assert_fsck(&project);
}

#[test]
fn a_missing_request_a_bad_name_or_no_remote_is_125_and_leaves_nothing() {
    let env = TestEnv::new();
    let (project, _origin, _, _) = forge(&env);
    for (pr, says) in [
        ("9", "no such request"),
        ("https://github.com/acme/app/pull/9", "refs/pull/9/head"),
        ("https://example.com/acme/app", "expected a number"),
        ("seven", "expected a number"),
    ] {
        let (out, _) = base_of(&env, &project, &["--pr", pr]);
        assert_status(&out, 125);
        assert!(stderr(&out).contains(says), "{pr}: {}", stderr(&out));
    }
    assert!(env.isolate_branches(&project).is_empty());
    assert!(env.worktree_dirs().is_empty());
    let lone = env.repo("lone");
    let (out, _) = base_of(&env, &lone, &["--pr", "7"]);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("no remote origin"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn base_fresh_fetches_the_remotes_default_branch_first() {
    let env = TestEnv::new();
    let (project, origin, _, _) = forge(&env);
    // The origin moves on after the clone; the project's main does not.
    let other = clone_of(&env, &origin);
    fs::write(other.join("new.txt"), "new\n").unwrap();
    env.git(&other, ["add", "new.txt"]);
    env.git(&other, ["commit", "-q", "-m", "upstream moved"]);
    env.git(&other, ["push", "-q", "origin", "HEAD:main"]);
    let upstream_main = env.git(&other, ["rev-parse", "HEAD"]).trim().to_string();
    let local_main = env.git(&project, ["rev-parse", "main"]).trim().to_string();
    assert_ne!(upstream_main, local_main);

    let (out, report) = base_of(&env, &project, &["--base", "fresh"]);
    assert_status(&out, 0);
    assert_eq!(
        report["worktree"]["base"].as_str(),
        Some(upstream_main.as_str()),
        "{report}"
    );
    assert_eq!(report["worktree"]["started_from"], "origin refs/heads/main");
    assert_eq!(
        env.git(&project, ["rev-parse", "main"]).trim(),
        local_main,
        "main moved"
    );

    // The configuration's `base = "fresh"` does the same without the option; offline it fails,
    // unless `base_fallback = "head"` lets it cut from HEAD.
    fs::write(project.join(".isolate.toml"), "base = \"fresh\"\n").unwrap();
    let (out, report) = base_of(&env, &project, &[]);
    assert_status(&out, 0);
    assert_eq!(
        report["worktree"]["base"].as_str(),
        Some(upstream_main.as_str())
    );
    fs::rename(&origin, env.path().join("gone.git")).unwrap();
    let (out, _) = base_of(&env, &project, &[]);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("cannot reach origin"),
        "{}",
        stderr(&out)
    );
    fs::write(
        project.join(".isolate.toml"),
        "base = \"fresh\"\nbase_fallback = \"head\"\n",
    )
    .unwrap();
    let (out, report) = base_of(&env, &project, &[]);
    assert_status(&out, 0);
    assert_eq!(
        report["worktree"]["base"].as_str(),
        Some(local_main.as_str())
    );
    assert!(
        stderr(&out).contains("cut from HEAD instead"),
        "{}",
        stderr(&out)
    );
}

/// An upload-pack that lies as a hostile server may: the real one, with the target of every
/// symbolic ref it advertises (HEAD's) replaced by the contents of the file `target` beside it.
const LYING_UPLOAD_PACK: &str = r#"#!/usr/bin/env python3
import os, sys, subprocess, threading
here = os.path.dirname(os.path.abspath(__file__))
target = open(os.path.join(here, "target"), "rb").read().strip()
p = subprocess.Popen(["git", "upload-pack"] + sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            p.stdin.close()
            return
        p.stdin.write(b)
        p.stdin.flush()
threading.Thread(target=up, daemon=True).start()
out, w = p.stdout, sys.stdout.buffer
while True:
    h = out.read(4)
    if len(h) < 4:
        break
    n = int(h, 16)
    if n < 4:
        w.write(h)
        w.flush()
        continue
    body = out.read(n - 4)
    for key in (b"symref-target:", b"symref=HEAD:"):
        if key in body:
            i = body.index(key) + len(key)
            j = body.find(b" ", i)
            j = len(body) - 1 if j < 0 else j
            body = body[:i] + target + body[j:]
    w.write(b"%04x" % (len(body) + 4) + body)
    w.flush()
p.wait()
"#;

#[test]
fn a_default_branch_named_like_a_refspec_moves_no_ref_of_the_project() {
    let env = TestEnv::new();
    let (project, origin, seven, _) = forge(&env);
    // The project has a branch the hostile remote wants to move; the remote has the commit.
    env.git(&project, ["branch", "victim"]);
    env.git(&origin, ["update-ref", "refs/heads/evil", &seven]);
    let victim = env
        .git(&project, ["rev-parse", "victim"])
        .trim()
        .to_string();
    let fake = env.path().join("lying-upload-pack");
    fs::write(&fake, LYING_UPLOAD_PACK).unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for target in [
        "+refs/heads/evil:refs/heads/victim",
        "refs/heads/evil:refs/heads/victim",
        "+refs/heads/evil:refs/tags/planted",
    ] {
        fs::write(env.path().join("target"), target).unwrap();
        env.git(
            &project,
            ["config", "remote.origin.uploadpack", fake.to_str().unwrap()],
        );
        let listed = env.git(&project, ["ls-remote", "--symref", "origin", "HEAD"]);
        assert!(listed.contains(target), "the remote does not lie: {listed}");
        let (out, _) = base_of(&env, &project, &["--base", "fresh"]);
        assert_status(&out, 125);
        assert_eq!(
            env.git(&project, ["rev-parse", "victim"]).trim(),
            victim,
            "{target}: the remote moved the project's branch"
        );
        assert!(
            env.git(&project, ["tag", "-l"]).trim().is_empty(),
            "{target}: the remote planted a tag"
        );
    }
}

/// A request's head names the user's filter driver in its `.gitattributes`; the user's git fetches
/// requests into remote-tracking refs (`+refs/pull/*/head:refs/remotes/origin/pr/*`, a common
/// setup). The fetch writes no ref of the project's, so the base stays one no ref vouches for and
/// the driver does not run outside a sandbox (it would write `smudged` beside the project).
#[test]
fn a_fetched_request_is_vouched_for_by_no_ref_so_its_filters_never_run_unsandboxed() {
    let env = TestEnv::new();
    let (project, origin, _, _) = forge(&env);
    let other = clone_of(&env, &origin);
    fs::write(other.join(".gitattributes"), "* filter=mark\n").unwrap();
    fs::write(other.join("nine.txt"), "nine\n").unwrap();
    env.git(&other, ["add", ".gitattributes", "nine.txt"]);
    env.git(&other, ["commit", "-q", "-m", "nine"]);
    env.git(&other, ["push", "-q", "origin", "HEAD:refs/pull/9/head"]);
    env.git(&other, ["push", "-q", "origin", "HEAD:main"]);
    let marker = env.path().join("smudged");
    env.git(
        &project,
        [
            "config",
            "--add",
            "remote.origin.fetch",
            "+refs/pull/*/head:refs/remotes/origin/pr/*",
        ],
    );
    env.git(
        &project,
        [
            "config",
            "filter.mark.smudge",
            &format!("sh -c 'echo ran >> {}; cat'", marker.display()),
        ],
    );
    let before = env.git(&project, ["for-each-ref", "refs/remotes"]);
    for args in [&["--pr", "9"][..], &["--base", "fresh"][..]] {
        let (out, _) = base_of(&env, &project, args);
        assert_status(&out, 0);
        assert!(
            !marker.exists(),
            "{args:?}: the request's filter driver ran outside the sandbox"
        );
        assert_eq!(
            env.git(&project, ["for-each-ref", "refs/remotes"]),
            before,
            "{args:?}: the fetch moved the project's remote-tracking refs"
        );
    }
}
