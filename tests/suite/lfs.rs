//! Content a job's commits need outside git's object store: Git LFS objects (the real git-lfs,
//! `/usr/bin/git-lfs`, configured in the test's global git configuration as `git lfs install` does)
//! and git-annex objects (their layout written as git-annex writes it). The import brings a job's
//! LFS objects into the project's store, checked by their hash, and whatever the project still
//! lacks keeps the worktree, at the job's end and for `rm` and `prune`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::*;

/// A test environment whose git runs git-lfs, and a project in it.
fn lfs_env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    env.git(env.path(), ["lfs", "install", "--skip-repo"]);
    let project = env.repo("app");
    (env, project)
}

/// What the jobs write as their LFS file: `seq 1 20000`, 108,894 bytes.
fn content() -> String {
    (1..=20000).map(|n| format!("{n}\n")).collect()
}

/// The SHA-256 of `content()`, as git-lfs names it (asked of the real git-lfs).
fn oid(env: &TestEnv) -> String {
    oid_of(env, &content())
}

/// The SHA-256 of `text`, as git-lfs names it.
fn oid_of(env: &TestEnv, text: &str) -> String {
    let file = env.path().join("content");
    fs::write(&file, text).unwrap();
    let pointer = env.git(
        env.path(),
        ["lfs", "pointer", &format!("--file={}", file.display())],
    );
    pointer
        .lines()
        .find_map(|l| l.strip_prefix("oid sha256:"))
        .unwrap()
        .to_string()
}

/// Where the project's LFS store keeps `oid`.
fn in_store(project: &Path, oid: &str) -> PathBuf {
    project
        .join(".git/lfs/objects")
        .join(&oid[0..2])
        .join(&oid[2..4])
        .join(oid)
}

/// The job's id from its report.
fn id(report: &serde_json::Value) -> String {
    report["id"].as_str().unwrap().to_string()
}

/// `git lfs fsck --objects RANGE` in the project: every object the commits point to is there.
fn lfs_fsck(env: &TestEnv, project: &Path, range: &str) -> std::process::Output {
    env.git_output(project, ["lfs", "fsck", "--objects", range])
}

/// The job's script: an LFS file added and committed, then removed and the removal committed, so
/// that the worktree is clean and the content lives, in the job's repository, only in its store.
const ADD_COMMIT_REMOVE: &str = "git lfs track '*.bin' >/dev/null && seq 1 20000 > data.bin && \
    git add .gitattributes data.bin && git commit -qm data && git rm -q data.bin && \
    git commit -qm 'data gone'";

/// Add, commit, remove from the working tree, end: the worktree is clean and goes, and its LFS
/// object, which was only in the job's store, is in the project's, byte for byte.
#[test]
fn an_lfs_object_a_job_committed_then_removed_reaches_the_project_before_its_worktree_goes() {
    let (env, project) = lfs_env();
    let oid = oid(&env);
    let (out, report) = env.worktree_job(&project, &[], ADD_COMMIT_REMOVE);
    assert_status(&out, 0);
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], true, "{report}");
    assert_eq!(wt["lfs_imported"], 1, "{report}");
    assert_eq!(
        fs::read_to_string(in_store(&project, &oid)).unwrap(),
        content()
    );
    let branch = format!("isolate/{}", id(&report));
    let fsck = lfs_fsck(&env, &project, &format!("main..{branch}"));
    assert!(fsck.status.success(), "{}{}", stdout(&fsck), stderr(&fsck));
    // The project's git-lfs gives the content back from its own store.
    let shown = env.git(&project, ["show", &format!("{branch}~1:data.bin")]);
    let file = env.path().join("pointer");
    fs::write(&file, format!("{shown}\n")).unwrap();
    let mut smudge = std::process::Command::new("git");
    env.apply(&mut smudge);
    let smudged = smudge
        .current_dir(&project)
        .args(["lfs", "smudge"])
        .stdin(fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(smudged.status.success(), "{}", stderr(&smudged));
    assert_eq!(String::from_utf8_lossy(&smudged.stdout), content());
    env.assert_fsck(&project);
}

/// The same as an ordinary user: the project's store is made with that user's rights.
#[test]
fn an_lfs_object_reaches_the_project_as_an_ordinary_user_too() {
    let (env, project) = lfs_env();
    let oid = oid(&env);
    let script = format!(
        "cd {} && \"$ISOLATE\" run --worktree -- sh -c \"{}\"",
        project.display(),
        ADD_COMMIT_REMOVE.replace('"', "\\\"")
    );
    let out = env.as_ordinary_user(&script);
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains("worktree: removed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(in_store(&project, &oid)).unwrap(),
        content()
    );
}

/// The LFS file stays checked out: the worktree is kept (git-lfs's clean filter does not run in
/// isolate's read, so the file differs from its pointer), the object is in the project already;
/// after `merge`, the project's branch has every object its commits point to, and `rm --force`,
/// which `rm`'s refusal ("already in main") invites, loses nothing.
#[test]
fn after_merge_then_rm_the_project_holds_the_lfs_content_of_a_kept_worktree() {
    let (env, project) = lfs_env();
    let oid = oid(&env);
    let script = "git lfs track '*.bin' >/dev/null && seq 1 20000 > data.bin && \
                  git add .gitattributes data.bin && git commit -qm data";
    let (out, report) = env.worktree_job(&project, &[], script);
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    assert!(in_store(&project, &oid).is_file(), "{report}");
    let id = id(&report);
    let merged = env.isolate(&project, ["merge", "--yes", &id]);
    assert_status(&merged, 0);
    let fsck = lfs_fsck(&env, &project, "main~1..main");
    assert!(fsck.status.success(), "{}{}", stdout(&fsck), stderr(&fsck));
    let rm = env.isolate(&project, ["rm", &id]);
    assert_status(&rm, 1);
    assert!(stderr(&rm).contains("already in main"), "{}", stderr(&rm));
    assert_status(&env.isolate(&project, ["rm", "--force", &id]), 0);
    assert_eq!(
        fs::read_to_string(in_store(&project, &oid)).unwrap(),
        content()
    );
    let fsck = lfs_fsck(&env, &project, "main~1..main");
    assert!(fsck.status.success(), "{}{}", stdout(&fsck), stderr(&fsck));
}

/// An LFS object over the import's size bound is not copied: the clean worktree is kept, saying
/// why, and `prune` keeps it too (it counts what is only in the job's store as work); `rm` under a
/// bound that fits imports it, and only then removes the worktree.
#[test]
fn lfs_content_only_in_the_jobs_store_keeps_the_worktree_for_rm_and_prune() {
    let (env, project) = lfs_env();
    // Over the bound: 15 copies of the content, 1.6 MB.
    let oid = oid_of(&env, &content().repeat(15));
    let script = ADD_COMMIT_REMOVE.replace(
        "seq 1 20000 > data.bin",
        "for i in $(seq 15); do seq 1 20000; done > data.bin",
    );
    let report = env.path().join("report.json");
    let out = env.isolate_with(
        &project,
        &[("ISOLATE_IMPORT_MAX_SIZE", "1M")],
        &[
            "run",
            "--worktree",
            "--report",
            report.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert_status(&out, 0);
    let report = env.report(&report);
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], false, "{report}");
    let why = wt["reason"].as_str().unwrap();
    assert!(
        why.contains("size bound") && why.contains("ISOLATE_IMPORT_MAX_SIZE"),
        "{why}"
    );
    assert!(
        !wt["outside_git"].as_array().unwrap().is_empty(),
        "{report}"
    );
    assert!(!in_store(&project, &oid).exists());
    let path = PathBuf::from(wt["path"].as_str().unwrap());
    let id = id(&report);

    let listed = env.isolate(&project, ["worktrees"]);
    assert!(
        stdout(&listed).contains("outside git"),
        "{}",
        stdout(&listed)
    );
    let pruned = env.isolate(&project, ["prune"]);
    assert_status(&pruned, 0);
    assert!(
        path.is_dir(),
        "prune removed a worktree holding LFS content"
    );
    assert!(
        stdout(&pruned).contains("LFS object"),
        "{}",
        stdout(&pruned)
    );

    let rm = env.isolate(&project, ["rm", &id]);
    assert_status(&rm, 0);
    assert!(!path.exists());
    assert_eq!(
        fs::read_to_string(in_store(&project, &oid)).unwrap(),
        content().repeat(15)
    );
    let branch = format!("isolate/{id}");
    let fsck = lfs_fsck(&env, &project, &format!("main..{branch}"));
    assert!(fsck.status.success(), "{}{}", stdout(&fsck), stderr(&fsck));
}

/// What the job's store holds under an object's name must be that object: a file whose bytes do
/// not hash to its name, a FIFO (moved in from TMPDIR, where the job may make one) and a link are
/// never copied, never block the end, and keep the worktree.
#[test]
fn a_forged_object_a_fifo_or_a_link_in_the_jobs_lfs_store_is_never_copied_and_keeps_the_worktree() {
    let (env, project) = lfs_env();
    let secret = env.path().join("secret");
    fs::write(&secret, content()).unwrap();
    let oid = oid(&env);
    let dir = format!(".git/lfs/objects/{}/{}", &oid[0..2], &oid[2..4]);
    for plant in [
        format!("mkdir -p {dir} && echo forged > {dir}/{oid}"),
        // (A FIFO cannot be made in the worktree, nor moved there; a directory holding one can.)
        format!(
            "mkdir -p .git/lfs/objects/{a} \"$TMPDIR/{b}\" && mkfifo \"$TMPDIR/{b}/{oid}\" && mv \"$TMPDIR/{b}\" {dir}",
            a = &oid[0..2],
            b = &oid[2..4],
        ),
        format!("mkdir -p {dir} && ln -s {} {dir}/{oid}", secret.display()),
    ] {
        let (out, report) = env.worktree_job(&project, &[], &plant);
        assert_status(&out, 0);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{plant}: {report}");
        let why = wt["reason"].as_str().unwrap();
        assert!(why.contains("only in the job's store"), "{plant}: {why}");
        assert!(!in_store(&project, &oid).exists(), "{plant}");
        assert_status(&env.isolate(&project, ["rm", "--force", &id(&report)]), 0);
    }
}

/// A commit pointing to an LFS object no store here holds (a pointer written by hand, or one whose
/// content the job deleted) keeps the worktree: isolate cannot tell where the content is.
#[test]
fn a_pointer_to_content_in_no_store_keeps_the_worktree() {
    let (env, project) = lfs_env();
    let oid = "1".repeat(64);
    let script = format!(
        "printf 'version https://git-lfs.github.com/spec/v1\\noid sha256:{oid}\\nsize 5\\n' > p.bin \
         && git add p.bin && git commit -qm pointer"
    );
    let (out, report) = env.worktree_job(&project, &[], &script);
    assert_status(&out, 0);
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], false, "{report}");
    assert!(
        wt["reason"]
            .as_str()
            .unwrap()
            .contains("point to in no store"),
        "{report}"
    );
    // The same commit without the pointer's look-alike: nothing keeps it.
    let (out, report) = env.worktree_job(
        &project,
        &[],
        "echo plain > p.txt && git add p.txt && git commit -qm plain",
    );
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], true, "{report}");
}

/// git-annex's objects are never copied: a key only in the job's annex keeps the worktree, one
/// the project's annex has too does not.
#[test]
fn a_git_annex_object_only_in_the_jobs_annex_keeps_the_worktree() {
    let (env, project) = lfs_env();
    let key = "SHA256E-s6--0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.txt";
    let dir = format!(".git/annex/objects/Xx/Yy/{key}");
    let script = format!("mkdir -p {dir} && echo data > {dir}/{key}");
    let (out, report) = env.worktree_job(&project, &[], &script);
    assert_status(&out, 0);
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], false, "{report}");
    assert!(
        wt["reason"]
            .as_str()
            .unwrap()
            .contains("git-annex object only in the job's annex"),
        "{report}"
    );
    assert_status(&env.isolate(&project, ["rm", "--force", &id(&report)]), 0);
    // The project's annex has the key: nothing of the job's is only there.
    let ours = project.join(&dir);
    fs::create_dir_all(&ours).unwrap();
    fs::write(ours.join(key), "data\n").unwrap();
    let (out, report) = env.worktree_job(&project, &[], &script);
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], true, "{report}");
}
