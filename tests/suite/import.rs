//! The import of a job's commits into the project: what the job claims is validated, and a project
//! branch that moved under the job is never overwritten. A failed import never deletes anything.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::*;

/// Runs `script` as a job, then waits, while the job blocks, for `during` to act on the project.
fn job_with_pause(
    env: &TestEnv,
    repo: &Path,
    script: &str,
    during: impl FnOnce(&str),
) -> serde_json::Value {
    let report = env.path().join("report.json");
    let full = format!("{script}\nwhile [ ! -e \"$TMPDIR/go\" ]; do sleep 0.05; done");
    let child = env
        .isolate_cmd(
            repo,
            [
                "run",
                "--worktree",
                "--report",
                report.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                &full,
            ],
        )
        .spawn()
        .unwrap();
    let mut id = String::new();
    let ready = wait_until(Duration::from_secs(30), || {
        let records = env.records();
        let Some(r) = records.iter().find(|r| r["state"] == "running") else {
            return false;
        };
        id = r["id"].as_str().unwrap().to_string();
        // The script's own work is done once it waits for the go file... approximated by its commit.
        env.state.join("jobs").join(&id).join("tmp").exists()
            && !env
                .git(repo, ["for-each-ref", &format!("refs/heads/isolate/{id}")])
                .is_empty()
    });
    assert!(ready, "the job did not start");
    during(&id);
    fs::write(env.state.join("jobs").join(&id).join("tmp/go"), "").unwrap();
    let out = finish(child, LIMIT);
    assert_status(&out, 0);
    env.report(&report)
}

#[test]
fn a_project_branch_moved_during_the_job_is_not_overwritten_and_the_worktree_is_kept() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let first = env.git(&repo, ["rev-parse", "HEAD~1"]);
    let report = job_with_pause(&env, &repo, "git commit -q --allow-empty -m work", |id| {
        env.git(&repo, ["branch", "-f", &format!("isolate/{id}"), &first]);
    });
    let branch = report["worktree"]["branch"].as_str().unwrap();
    assert_eq!(
        env.git(&repo, ["rev-parse", branch]),
        first,
        "the moved branch was overwritten"
    );
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    assert!(
        report["worktree"]["reason"]
            .as_str()
            .unwrap()
            .contains("import failed"),
        "{report}"
    );
    assert!(Path::new(report["worktree"]["path"].as_str().unwrap()).is_dir());
}

#[test]
fn a_project_branch_deleted_during_the_job_is_created_again_with_the_jobs_commits() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let report = job_with_pause(&env, &repo, "git commit -q --allow-empty -m work", |id| {
        env.git(&repo, ["branch", "-D", &format!("isolate/{id}")]);
    });
    let branch = report["worktree"]["branch"].as_str().unwrap();
    assert_eq!(env.git(&repo, ["log", "-1", "--format=%s", branch]), "work");
    assert_eq!(report["worktree"]["commits"], 1);
    assert_eq!(report["worktree"]["removed"], true);
    env.assert_fsck(&repo);
}

#[test]
fn a_crafted_branch_tip_is_refused_and_nothing_is_deleted() {
    for (what, tip) in [
        ("a tree id", "$(git rev-parse HEAD^{tree})"),
        (
            "an id that does not exist",
            "1234567890123456789012345678901234567890",
        ),
        ("39 hex digits", "123456789012345678901234567890123456789"),
    ] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let base = env.git(&repo, ["rev-parse", "HEAD"]);
        // Written straight into the ref file, as a hostile job would.
        let script = format!(
            "git pack-refs --all; mkdir -p .git/refs/heads/isolate; echo {tip} > \".git/refs/heads/$ISOLATE_BRANCH\""
        );
        let (out, value) = env.worktree_job(&repo, &[], &script);
        assert_status(&out, 0);
        assert_eq!(value["worktree"]["removed"], false, "{what}: {value}");
        let branch = value["worktree"]["branch"].as_str().unwrap();
        assert_eq!(
            env.git(&repo, ["rev-parse", branch]),
            base,
            "{what}: the project's branch moved"
        );
        env.assert_fsck(&repo);
    }
}

/// Patches the job's commit-graph so that its tip's entry names the base's tree (the real tip
/// commit names another): a reader that trusts the graph leaves the tip's tree out of the pack.
const LIE_IN_THE_GRAPH: &str = r#"
import os, subprocess, sys
def git(*a):
    return subprocess.check_output(("git",) + a).decode().strip()
tip, base_tree = git("rev-parse", "HEAD"), git("rev-parse", "HEAD~1^{tree}")
git("commit-graph", "write", "--reachable")
path = git("rev-parse", "--git-path", "objects/info/commit-graph")
data = bytearray(open(path, "rb").read())
chunks, offsets = data[6], {}
for i in range(chunks + 1):
    at = 8 + 12 * i
    offsets[bytes(data[at:at + 4])] = int.from_bytes(data[at + 4:at + 12], "big")
oids = offsets[b"OIDL"]
count = (offsets[b"CDAT"] - oids) // 20
index = [bytes(data[oids + 20 * i:oids + 20 * i + 20]).hex() for i in range(count)].index(tip)
at = offsets[b"CDAT"] + 36 * index
data[at:at + 20] = bytes.fromhex(base_tree)
os.chmod(path, 0o644)
open(path, "wb").write(bytes(data))
print("patched", file=sys.stderr)
"#;

/// A job that lies in its commit-graph (the project has none of its own, as after `git init`):
/// the import reads objects, not the job's graph, bitmaps or multi-pack-index, so the project's
/// branch holds the job's real tree and `git fsck` is clean; nothing of the work is lost.
#[test]
fn a_lying_commit_graph_copies_the_real_tree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    assert!(!repo.join(".git/objects/info/commit-graph").exists());
    let liar = env.file("liar.py", LIE_IN_THE_GRAPH);
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        &format!(
            "mkdir -p src && echo real-work > src/work.txt && git add src && \
             git commit -q -m work && python3 {}",
            liar.display()
        ),
    );
    assert_status(&out, 0);
    assert!(stderr(&out).contains("patched"), "{}", stderr(&out));
    env.assert_fsck(&repo);
    let branch = report["worktree"]["branch"].as_str().unwrap();
    assert_eq!(
        env.git(&repo, ["show", &format!("{branch}:src/work.txt")]),
        "real-work"
    );
}

/// The import is bounded: a job whose objects need more memory than the import may use, or a pack
/// larger than it may copy, keeps its worktree, nothing is imported, and the outcome names the
/// bound and the variable that sets it. (64 MB of random bytes stand in for a delta bomb: both
/// make git hold more than the bound.)
#[test]
fn an_import_over_its_memory_or_size_bound_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (var, value, bound) in [
        ("ISOLATE_IMPORT_MEMORY", "48M", "memory"),
        ("ISOLATE_IMPORT_MAX_SIZE", "1M", "size"),
    ] {
        let report = env.path().join(format!("report-{bound}.json"));
        let out = env.isolate_with(
            &repo,
            &[(var, value)],
            &[
                "run",
                "--worktree",
                "--report",
                report.to_str().unwrap(),
                "--",
                "sh",
                "-c",
                "head -c 64000000 /dev/urandom > big.bin && git add big.bin && git commit -q -m big",
            ],
        );
        assert_status(&out, 0);
        let report = env.report(&report);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{bound}: {report}");
        let reason = wt["reason"].as_str().unwrap();
        assert!(
            reason.contains(&format!("over its {bound} bound")) && reason.contains(var),
            "{bound}: {reason}"
        );
        assert_eq!(wt["commits"], 0, "{bound}");
        assert!(PathBuf::from(wt["path"].as_str().unwrap())
            .join("big.bin")
            .is_file());
        env.assert_fsck(&repo);
    }
}

/// The delta bomb of the second attack pass (tests/data/delta-bomb.py: an 8 MiB zero blob and a
/// 768-byte REF_DELTA that expands to 3 GiB, named by a committed tree): the import is refused at
/// its memory bound, the worktree is kept, the project is intact, and no process of the run grew
/// past the bound (measured by a parent that waits for all of them: its children's peak RSS).
#[test]
fn a_delta_bomb_stops_at_the_import_memory_bound() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let bomb = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/delta-bomb.py");
    let report = env.path().join("bomb.json");
    let measure = "import resource, subprocess, sys\n\
                   subprocess.run(sys.argv[1:], check=True)\n\
                   print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n";
    let mut cmd = env.isolate_cmd(&repo, Vec::<&str>::new());
    cmd.env_clear();
    env.apply(&mut cmd);
    let out = std::process::Command::new("python3")
        .args(["-c", measure, env!("CARGO_BIN_EXE_isolate")])
        .args([
            "run",
            "--worktree",
            "--report",
            report.to_str().unwrap(),
            "--",
        ])
        .args(["python3", bomb.to_str().unwrap()])
        .current_dir(&repo)
        .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .output()
        .unwrap();
    assert_status(&out, 0);
    assert!(stderr(&out).contains("bomb "), "{}", stderr(&out));
    let peak_kib: u64 = stdout(&out).trim().parse().unwrap();
    assert!(
        peak_kib < (2 << 20) + (256 << 10),
        "a process of the run reached {peak_kib} KiB"
    );
    let report = env.report(&report);
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], false, "{report}");
    assert!(
        wt["reason"]
            .as_str()
            .unwrap()
            .contains("over its memory bound"),
        "{report}"
    );
    env.assert_fsck(&repo);
}

/// An import refused at its size bound leaves nothing in the project's object store: index-pack
/// left its `tmp_pack_*` of up to the bound (4 GiB by default) in `objects/pack` at each refusal,
/// so a job retried or resumed could fill the user's disk a bound at a time.
#[test]
fn an_import_over_its_size_bound_leaves_no_partial_pack_in_the_project() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let packs = repo.join(".git/objects/pack");
    let temporary = |dir: &Path| -> Vec<String> {
        fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("tmp_"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let out = env.isolate_with(
        &repo,
        &[("ISOLATE_IMPORT_MAX_SIZE", "1M")],
        &[
            "run",
            "--worktree",
            "--",
            "sh",
            "-c",
            "head -c 3000000 /dev/urandom > big.bin && git add big.bin && git commit -q -m big",
        ],
    );
    assert_status(&out, 0);
    assert!(stderr(&out).contains("size bound"), "{}", stderr(&out));
    assert_eq!(temporary(&packs), Vec::<String>::new());
    env.assert_fsck(&repo);
}
