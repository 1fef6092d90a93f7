//! What a fetch from the project's remote (`--pr`, `--base fresh`) may bring into the project: a
//! hostile remote (a local bare repository the test makes) serves a malformed object, or a pack
//! over the size bound. Neither may enter the project's store, nor leave a ref or a quarantine
//! behind; the project's `git fsck` stays clean.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::*;

/// A bare origin and the project cloned from it. Returns (project, origin).
fn remote(env: &TestEnv) -> (PathBuf, PathBuf) {
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
    (project, origin)
}

/// Writes `text` into `repo` as an object of `kind` exactly as given (`--literally`: no check).
fn literal(env: &TestEnv, repo: &Path, kind: &str, text: &str) -> String {
    let file = env.path().join("literal");
    fs::write(&file, text).unwrap();
    env.git(
        repo,
        [
            "hash-object",
            "--literally",
            "-t",
            kind,
            "-w",
            file.to_str().unwrap(),
        ],
    )
}

/// `isolate run --worktree ARGS -- true` in `project`.
fn run(
    env: &TestEnv,
    project: &Path,
    vars: &[(&str, &str)],
    args: &[&str],
) -> std::process::Output {
    let mut all = vec!["run", "--worktree"];
    all.extend_from_slice(args);
    all.extend(["--", "true"]);
    env.isolate_with(project, vars, &all)
}

/// Whether `repo`'s store has `id` (its own, alternates aside: the project has none).
fn has(env: &TestEnv, repo: &Path, id: &str) -> bool {
    env.git_output(repo, ["cat-file", "-e", id])
        .status
        .success()
}

/// What a refused fetch must leave: no job, no branch, no quarantine or partial pack in the store,
/// no ref at `id` (FETCH_HEAD included), and a clean `git fsck`.
fn left_nothing(env: &TestEnv, project: &Path, id: &str) {
    assert!(!has(env, project, id), "the project's store has {id}");
    assert!(env.isolate_branches(project).is_empty());
    assert!(env.worktree_dirs().is_empty(), "{:?}", env.worktree_dirs());
    let objects = project.join(".git/objects");
    for entry in fs::read_dir(&objects).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with("incoming-"), "a quarantine left: {name}");
    }
    for entry in fs::read_dir(objects.join("pack")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with("tmp_"), "a partial pack left: {name}");
    }
    let refs = env.git(
        project,
        ["for-each-ref", "--format=%(objectname) %(refname)"],
    );
    assert!(!refs.contains(id), "a ref at {id}: {refs}");
    let fetch_head = fs::read_to_string(project.join(".git/FETCH_HEAD")).unwrap_or_default();
    assert!(!fetch_head.contains(id), "FETCH_HEAD at {id}: {fetch_head}");
    env.assert_fsck(project);
}

/// A request whose head is a commit `git fsck` refuses (a committer line without an email), and a
/// default branch whose tree holds the same name twice: git's own fetch takes both into the
/// project's store; isolate's refuses both, and the project stays as it was.
#[test]
fn a_remotes_malformed_objects_never_enter_the_project() {
    let env = TestEnv::new();
    let (project, origin) = remote(&env);
    let main = env.git(&origin, ["rev-parse", "main"]);
    let tree = env.git(&origin, ["rev-parse", "main^{tree}"]);
    let commit = literal(
        &env,
        &origin,
        "commit",
        &format!(
            "tree {tree}\nparent {main}\nauthor A <a@example.com> 1700000000 +0000\n\
             committer No Email 1700000000 +0000\n\nmalformed\n"
        ),
    );
    env.git(&origin, ["update-ref", "refs/pull/5/head", &commit]);
    // A tree naming `README` twice, under a commit that is itself well formed.
    let blob = env.git(&origin, ["rev-parse", "main:README"]);
    let raw_blob: Vec<u8> = (0..blob.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&blob[i..i + 2], 16).unwrap())
        .collect();
    let mut tree_bytes = Vec::new();
    for _ in 0..2 {
        tree_bytes.extend_from_slice(b"100644 README\0");
        tree_bytes.extend_from_slice(&raw_blob);
    }
    let file = env.path().join("tree");
    fs::write(&file, &tree_bytes).unwrap();
    let bad_tree = env.git(
        &origin,
        [
            "hash-object",
            "--literally",
            "-t",
            "tree",
            "-w",
            file.to_str().unwrap(),
        ],
    );
    let twice = literal(
        &env,
        &origin,
        "commit",
        &format!(
            "tree {bad_tree}\nparent {main}\nauthor A <a@example.com> 1700000000 +0000\n\
             committer A <a@example.com> 1700000000 +0000\n\ntwice\n"
        ),
    );
    env.git(&origin, ["update-ref", "refs/heads/main", &twice]);
    // git's own fetch, as isolate's was, takes them: the test's remote is hostile indeed.
    let plain = env.path().join("plain");
    env.git(env.path(), ["init", "-q", plain.to_str().unwrap()]);
    for (what, id) in [("refs/pull/5/head", &commit), ("refs/heads/main", &twice)] {
        let fetched = env.git_output(&plain, ["fetch", "-q", origin.to_str().unwrap(), what]);
        assert!(fetched.status.success(), "{}", stderr(&fetched));
        assert!(has(&env, &plain, id), "git's plain fetch refused {what}");
    }

    let out = run(&env, &project, &[], &["--pr", "5"]);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("missingEmail") || stderr(&out).contains("fsck"),
        "{}",
        stderr(&out)
    );
    left_nothing(&env, &project, &commit);

    let out = run(&env, &project, &[], &["--base", "fresh"]);
    assert_status(&out, 125);
    left_nothing(&env, &project, &twice);
    assert!(!has(&env, &project, &bad_tree));

    // A well-formed request is fetched and cut from as before.
    env.git(&origin, ["update-ref", "refs/heads/main", &main]);
    let upstream = env.path().join("upstream");
    fs::write(upstream.join("six.txt"), "six\n").unwrap();
    env.git(&upstream, ["add", "six.txt"]);
    env.git(&upstream, ["commit", "-q", "-m", "six"]);
    let six = env.git(&upstream, ["rev-parse", "HEAD"]);
    env.git(
        &upstream,
        [
            "push",
            "-q",
            origin.to_str().unwrap(),
            "HEAD:refs/pull/6/head",
        ],
    );
    let out = run(&env, &project, &[], &["--pr", "6", "--keep"]);
    assert_status(&out, 0);
    assert!(has(&env, &project, &six));
    env.assert_fsck(&project);
}

/// A request whose pack is over the size bound (`ISOLATE_IMPORT_MAX_SIZE`): the fetch stops there,
/// says which bound and how to raise it, and leaves no partial pack; under the bound it is fetched.
#[test]
fn a_pack_over_the_size_bound_is_refused_whole() {
    let env = TestEnv::new();
    let (project, origin) = remote(&env);
    let upstream = env.path().join("upstream");
    // Random bytes: a pack cannot make them smaller than they are.
    let mut noise = vec![0u8; 3 << 20];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for b in noise.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
    fs::write(upstream.join("big.bin"), &noise).unwrap();
    env.git(&upstream, ["add", "big.bin"]);
    env.git(&upstream, ["commit", "-q", "-m", "big"]);
    let big = env.git(&upstream, ["rev-parse", "HEAD"]);
    env.git(
        &upstream,
        [
            "push",
            "-q",
            origin.to_str().unwrap(),
            "HEAD:refs/pull/9/head",
        ],
    );

    let bound = [("ISOLATE_IMPORT_MAX_SIZE", "1M")];
    let out = run(&env, &project, &bound, &["--pr", "9"]);
    assert_status(&out, 125);
    assert!(
        stderr(&out).contains("size bound") && stderr(&out).contains("ISOLATE_IMPORT_MAX_SIZE"),
        "{}",
        stderr(&out)
    );
    left_nothing(&env, &project, &big);

    let out = run(
        &env,
        &project,
        &[("ISOLATE_IMPORT_MAX_SIZE", "8M")],
        &["--pr", "9", "--keep"],
    );
    assert_status(&out, 0);
    assert!(has(&env, &project, &big));
    env.assert_fsck(&project);
}
