//! Fan-out and fan-in: many jobs on one project brought home by `merge` (in order, stopping at the
//! first conflict, whether or not their worktrees still exist), their branches settled by `rm` and
//! `prune`, worktrees `rm --force` left behind kept in view, and `worktrees`, `prune --dry-run` and
//! `prune` agreeing on every state a worktree can be in.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use crate::support::*;

/// A background job in `repo` running `script` in a fresh worktree; its id.
fn start(env: &TestEnv, repo: &Path, extra: &[&str], script: &str) -> String {
    let mut args = vec!["run", "--bg", "--worktree"];
    args.extend_from_slice(extra);
    args.extend(["--", "sh", "-c", script]);
    let out = env.isolate(repo, &args);
    assert_status(&out, 0);
    stdout(&out).trim().to_string()
}

fn wait(env: &TestEnv, id: &str) {
    assert_status(&env.isolate(env.path(), ["wait", id]), 0);
}

fn status(env: &TestEnv, id: &str) -> serde_json::Value {
    let out = env.isolate(env.path(), ["status", id, "--json"]);
    assert_status(&out, 0);
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(out), stderr(out)))
}

fn ids(value: &serde_json::Value, key: &str) -> Vec<String> {
    value[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// A commit of `file` with `text` on main, in the project's checkout.
fn commit_on_main(env: &TestEnv, repo: &Path, file: &str, text: &str) {
    fs::write(repo.join(file), text).unwrap();
    env.git(repo, ["add", file]);
    env.git(repo, ["commit", "-q", "-m", &format!("main: {file}")]);
}

fn commit_script(file: &str, text: &str) -> String {
    format!("echo {text} > {file} && git add {file} && git commit -q -m 'add {file}'")
}

fn has_ref(env: &TestEnv, repo: &Path, name: &str) -> bool {
    env.git_output(repo, ["rev-parse", "--verify", "--quiet", name])
        .status
        .success()
}

#[test]
fn eight_jobs_fan_out_and_merge_all_lands_seven_and_leaves_the_conflict_in_its_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("shared.txt"), "one line\n").unwrap();
    env.git(&repo, ["add", "shared.txt"]);
    env.git(&repo, ["commit", "-q", "-m", "shared"]);
    let project_line = env.git(&repo, ["rev-parse", "main"]);
    // Seven jobs at once, each committing its own file; the first also rewrites the shared line.
    let mut jobs: Vec<String> = thread::scope(|s| {
        let handles: Vec<_> = (0..7)
            .map(|i| {
                let env = &env;
                let repo = &repo;
                s.spawn(move || {
                    let mut script = commit_script(&format!("job-{i}.txt"), &format!("job {i}"));
                    if i == 0 {
                        script = format!(
                            "{script} && echo first job > shared.txt && git commit -q -am shared"
                        );
                    }
                    start(env, repo, &[], &script)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // The eighth, started last, rewrites the same line.
    thread::sleep(Duration::from_millis(200));
    jobs.push(start(
        &env,
        &repo,
        &[],
        "echo eighth job > shared.txt && git commit -q -am 'eighth: shared'",
    ));
    for id in &jobs {
        wait(&env, id);
    }
    for id in &jobs {
        assert_eq!(status(&env, id)["worktree"]["removed"], true, "{id}");
    }
    // Oldest first: the seven in the order they started, the eighth last.
    let seven: Vec<String> = {
        let mut seven = jobs[..7].to_vec();
        seven.sort_by_key(|id| {
            let s = status(&env, id);
            (
                s["started_at"].as_str().unwrap().to_string(),
                s["supervisor_start"].as_u64().unwrap(),
                id.clone(),
            )
        });
        seven
    };
    let eighth = jobs[7].clone();

    let out = env.isolate(&repo, ["merge", "--all", "--yes", "--json"]);
    assert_status(&out, 1);
    let summary = json(&out);
    assert_eq!(ids(&summary, "merged"), seven, "{summary}");
    assert_eq!(ids(&summary, "conflicted"), vec![eighth.clone()]);
    assert!(ids(&summary, "not_tried").is_empty() && ids(&summary, "failed").is_empty());
    // Each preview was the job's own change: one file each (two for the first), never another
    // job's file that main had by then.
    let previews = stderr(&out);
    assert_eq!(
        previews.matches("changing 1 file:").count(),
        7,
        "{previews}"
    );
    assert!(previews.contains("has moved"), "{previews}");

    // The project's own line is main's first-parent history: seven merges, then what it was.
    let first_parent: Vec<String> = env
        .git(&repo, ["log", "--first-parent", "--format=%H %s", "main"])
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(first_parent.len(), 7 + 3, "{first_parent:?}");
    for (line, id) in first_parent.iter().zip(seven.iter().rev()) {
        assert!(
            line.ends_with(&format!("Merge branch 'isolate/{id}'")),
            "{line} for {id}"
        );
        let merge = line.split(' ').next().unwrap();
        assert_eq!(
            env.git(&repo, ["rev-parse", &format!("{merge}^2")]),
            env.git(&repo, ["rev-parse", &format!("isolate/{id}")])
        );
    }
    assert!(first_parent[7].starts_with(&project_line));
    for i in 0..7 {
        assert!(repo.join(format!("job-{i}.txt")).exists(), "job-{i}.txt");
    }
    assert_eq!(
        fs::read_to_string(repo.join("shared.txt")).unwrap(),
        "first job\n"
    );
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    assert!(!repo.join(".git/MERGE_HEAD").exists());
    env.assert_fsck(&repo);

    // The conflict is in the eighth job's worktree, made again from its branch.
    let conflict = &summary["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == eighth.as_str())
        .unwrap()
        .clone();
    assert_eq!(conflict["outcome"], "conflicted");
    assert_eq!(conflict["recreated"], true);
    let worktree = PathBuf::from(conflict["worktree"].as_str().unwrap());
    let text = fs::read_to_string(worktree.join("shared.txt")).unwrap();
    assert!(
        text.contains("<<<<<<<") && text.contains("eighth job"),
        "{text}"
    );
    assert!(worktree.join(".git/MERGE_HEAD").exists());
    assert_eq!(status(&env, &eighth)["worktree"]["removed"], false);

    // Resolved in the worktree, sandboxed, and merged again: done.
    let out = env.isolate(
        &repo,
        [
            "run",
            "--resume",
            &eighth,
            "--",
            "sh",
            "-c",
            "echo both jobs > shared.txt && git add shared.txt && git commit -q --no-edit",
        ],
    );
    assert_status(&out, 0);
    let out = env.isolate(&repo, ["merge", "--yes", &eighth]);
    assert_status(&out, 0);
    assert_eq!(
        fs::read_to_string(repo.join("shared.txt")).unwrap(),
        "both jobs\n"
    );
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%s", "main"]),
        format!("Merge branch 'isolate/{eighth}'")
    );
    assert_eq!(
        env.git(&repo, ["rev-list", "--count", "--first-parent", "main"]),
        "11"
    );
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
    env.assert_fsck(&repo);
    // Nothing is left to merge: every job is listed, with nothing to merge.
    let out = env.isolate(&repo, ["merge", "--all", "--yes", "--json"]);
    assert_status(&out, 0);
    let listed = json(&out)["jobs"].as_array().unwrap().clone();
    assert!(
        listed.iter().all(|j| j["outcome"] == "already_in"),
        "{listed:?}"
    );
    assert!(stderr(&env.isolate(&repo, ["merge", "--all", "--yes"])).contains("nothing to merge"));
}

#[test]
fn merge_takes_jobs_in_the_order_given_and_says_which_were_not_tried() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, a) = env.worktree_job(&repo, &[], "echo a > README && git commit -q -am a");
    let (_, b) = env.worktree_job(&repo, &[], "echo b > README && git commit -q -am b");
    let (_, c) = env.worktree_job(&repo, &[], &commit_script("c.txt", "c"));
    let [a, b, c] = [&a, &b, &c].map(|r| r["id"].as_str().unwrap().to_string());
    let c_tip = env.git(&repo, ["rev-parse", &format!("isolate/{c}")]);
    let out = env.isolate(&repo, ["merge", "--yes", "--json", &a, &b, &c]);
    assert_status(&out, 1);
    let summary = json(&out);
    assert_eq!(ids(&summary, "merged"), vec![a.clone()]);
    assert_eq!(ids(&summary, "conflicted"), vec![b.clone()]);
    assert_eq!(ids(&summary, "not_tried"), vec![c.clone()]);
    assert_eq!(summary["jobs"][2]["outcome"], "not_tried");
    assert_eq!(fs::read_to_string(repo.join("README")).unwrap(), "a\n");
    assert!(!repo.join("c.txt").exists());
    assert_eq!(
        env.git(&repo, ["rev-parse", &format!("isolate/{c}")]),
        c_tip
    );
    // Without --json the same is said in words.
    let out = env.isolate(&repo, ["merge", "--yes", &b, &c]);
    assert_status(&out, 1);
    assert!(
        stderr(&out).contains(&format!("not tried: {c}")),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_job_whose_commits_the_project_already_has_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, picked) = env.worktree_job(&repo, &[], &commit_script("p.txt", "picked"));
    let (_, squashed) = env.worktree_job(
        &repo,
        &[],
        &format!(
            "{} && {}",
            commit_script("s1.txt", "one"),
            commit_script("s2.txt", "two")
        ),
    );
    let [picked, squashed] = [&picked, &squashed].map(|r| r["id"].as_str().unwrap().to_string());
    // By hand: a cherry-pick of one, a squash merge of the other.
    env.git(&repo, ["cherry-pick", &format!("isolate/{picked}")]);
    env.git(
        &repo,
        ["merge", "-q", "--squash", &format!("isolate/{squashed}")],
    );
    env.git(&repo, ["commit", "-q", "-m", "squashed"]);
    let main = env.git(&repo, ["rev-parse", "main"]);
    for id in [&picked, &squashed] {
        let out = env.isolate(&repo, ["merge", "--yes", id]);
        assert_status(&out, 0);
        assert!(stdout(&out).contains("already has"), "{}", stdout(&out));
        assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);
    }
    let out = env.isolate(&repo, ["merge", "--yes", "--json", &picked]);
    assert_status(&out, 0);
    assert_eq!(ids(&json(&out), "already_in"), vec![picked.clone()]);
    // And --all has nothing to do: each job listed with nothing to merge.
    let out = env.isolate(&repo, ["merge", "--all", "--yes", "--json"]);
    assert_status(&out, 0);
    let listed = json(&out)["jobs"].as_array().unwrap().clone();
    assert!(
        listed.iter().all(|j| j["outcome"] == "already_in"),
        "{listed:?}"
    );
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);
}

#[test]
fn the_merge_message_names_the_branch_and_the_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = env.worktree_job(
        &repo,
        &["--name", "login fix"],
        &commit_script("login.txt", "fixed"),
    );
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    assert_status(&env.isolate(&repo, ["merge", "--yes", id]), 0);
    assert_eq!(
        env.git(&repo, ["log", "-1", "--format=%s", "main"]),
        format!("Merge branch 'isolate/{id}' (login fix)")
    );
}

#[test]
fn merge_and_merge_all_refuse_what_is_not_theirs_to_merge() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // A running job is not merged; neither is one of another project.
    let running = start(&env, &repo, &[], "sleep 300");
    let out = env.isolate(&repo, ["merge", "--yes", &running]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("running"), "{}", stderr(&out));
    let other = env.repo("other");
    let (_, theirs) = env.worktree_job(&other, &[], &commit_script("o.txt", "o"));
    let out = env.isolate(&repo, ["merge", "--all", "--yes", "--json"]);
    assert_status(&out, 0);
    // The running one is listed as running (not merged); the other project's is not listed.
    let jobs = json(&out)["jobs"].as_array().unwrap().clone();
    assert!(!jobs.iter().any(|j| j["id"] == theirs["id"]), "{jobs:?}");
    assert!(
        jobs.iter()
            .all(|j| j["id"] != running.as_str() || j["outcome"] == "running"),
        "{jobs:?}"
    );
    // Usage: job names or --all.
    assert_status(&env.isolate(&repo, ["merge", "--yes"]), 2);
    assert_status(&env.isolate(&repo, ["merge", "--all", &running]), 2);
    assert_status(&env.isolate(env.path(), ["stop", &running]), 0);
}

/// Files git's status does not look at in the project's checkout (`--assume-unchanged`,
/// `--skip-worktree`, every file under `core.ignoreStat`): the look for the user's changes missed
/// the edit there, git's own refusal was followed by a checkout that put the file "back", and
/// with a filter driver of the user's the merge wrote over the edit and said it had merged. The
/// merge is refused, and the edit stays.
#[test]
fn a_merge_never_writes_over_an_edit_git_does_not_look_at() {
    for flag in ["assume", "skip", "ignore-stat", "skip-driven"] {
        let env = TestEnv::new();
        let repo = env.repo("app");
        fs::write(repo.join("conf.txt"), "base\n").unwrap();
        env.git(&repo, ["add", "conf.txt"]);
        env.git(&repo, ["commit", "-q", "-m", "conf"]);
        if flag == "skip-driven" {
            env.git(&repo, ["config", "filter.kw.smudge", "cat"]);
            env.git(&repo, ["config", "filter.kw.clean", "cat"]);
            fs::write(repo.join(".git/info/attributes"), "*.txt filter=kw\n").unwrap();
        }
        let (out, report) =
            env.worktree_job(&repo, &[], "echo job >> conf.txt && git commit -q -am job");
        assert_status(&out, 0);
        let id = report["id"].as_str().unwrap().to_string();
        match flag {
            "assume" => {
                env.git(&repo, ["update-index", "--assume-unchanged", "conf.txt"]);
            }
            "ignore-stat" => {
                env.git(&repo, ["config", "core.ignoreStat", "true"]);
                env.git(&repo, ["update-index", "--really-refresh", "-q"]);
                env.git(&repo, ["add", "conf.txt"]);
            }
            _ => {
                env.git(&repo, ["update-index", "--skip-worktree", "conf.txt"]);
            }
        }
        fs::write(repo.join("conf.txt"), "base\nMY LOCAL SETTING\n").unwrap();
        let main = env.git(&repo, ["rev-parse", "main"]);
        let out = env.isolate(&repo, ["merge", "--yes", &id]);
        assert_status(&out, 1);
        assert_eq!(
            fs::read_to_string(repo.join("conf.txt")).unwrap(),
            "base\nMY LOCAL SETTING\n",
            "{flag}: {}",
            stderr(&out)
        );
        assert_eq!(env.git(&repo, ["rev-parse", "main"]), main, "{flag}");
        assert!(
            stderr(&out).contains("conf.txt"),
            "{flag}: {}",
            stderr(&out)
        );
    }
}

/// git cherry's patch ids leave whitespace out: a job's commit that differs from one the project
/// branch has only in indentation (which Python reads) counted as merged, and `rm` and `prune`
/// deleted the branch, and `merge` said the project already had it. A match counts only with the
/// whitespace kept; a commit cherry-picked as it is still counts as landed.
#[test]
fn a_commit_the_project_has_only_with_other_whitespace_is_not_merged() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("f.py"), "def f(x):\n    pass\n").unwrap();
    env.git(&repo, ["add", "f.py"]);
    env.git(&repo, ["commit", "-q", "-m", "f"]);
    let job = "printf 'def f(x):\\n    pass\\nif x:\\n    a()\\nb()\\n' > f.py && git commit -q -am 'b always'";
    let (_, moved) = env.worktree_job(&repo, &[], job);
    let (_, picked) = env.worktree_job(&repo, &[], &commit_script("p.txt", "p"));
    let [moved, picked] = [&moved, &picked].map(|r| r["id"].as_str().unwrap().to_string());
    fs::write(
        repo.join("f.py"),
        "def f(x):\n    pass\nif x:\n    a()\n    b()\n",
    )
    .unwrap();
    env.git(&repo, ["commit", "-q", "-am", "b only if x"]);
    // Picked as it is, then changed again: landed all the same (a merge of it would conflict).
    env.git(&repo, ["cherry-pick", &format!("isolate/{picked}")]);
    fs::write(repo.join("p.txt"), "p, then more\n").unwrap();
    env.git(&repo, ["commit", "-q", "-am", "more of p"]);
    let cherry = env.git(&repo, ["cherry", "main", &format!("isolate/{moved}")]);
    assert!(cherry.starts_with('-'), "git cherry matched it: {cherry}");
    let tip = env.git(&repo, ["rev-parse", &format!("isolate/{moved}")]);
    let main = env.git(&repo, ["rev-parse", "main"]);
    // Asked with no one to answer: the change is shown, and nothing merged.
    let out = env.isolate(&repo, ["merge", &moved]);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        !said.contains("already has") && said.contains("M f.py"),
        "{said}"
    );
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);

    for args in [vec!["rm", moved.as_str()], vec!["prune"]] {
        let out = env.isolate(&repo, args.clone());
        assert_status(&out, 0);
        assert_eq!(
            env.git(&repo, ["rev-parse", &format!("isolate/{moved}")]),
            tip,
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert!(!has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{picked}")
    ));
    env.assert_fsck(&repo);
}

#[test]
fn rm_deletes_a_merged_branch_and_keeps_an_unmerged_one_saying_so() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, merged) = env.worktree_job(&repo, &[], &commit_script("m.txt", "m"));
    let (_, squashed) = env.worktree_job(&repo, &["--keep"], &commit_script("s.txt", "s"));
    let (_, unmerged) = env.worktree_job(&repo, &[], &commit_script("u.txt", "u"));
    let [merged, squashed, unmerged] =
        [&merged, &squashed, &unmerged].map(|r| r["id"].as_str().unwrap().to_string());
    assert_status(&env.isolate(&repo, ["merge", "--yes", &merged]), 0);
    env.git(
        &repo,
        ["merge", "-q", "--squash", &format!("isolate/{squashed}")],
    );
    env.git(&repo, ["commit", "-q", "-m", "squashed by hand"]);

    for id in [&merged, &squashed] {
        let out = env.isolate(env.path(), ["rm", id]);
        assert_status(&out, 0);
        assert!(
            !has_ref(&env, &repo, &format!("refs/heads/isolate/{id}")),
            "{id}"
        );
        assert!(
            !has_ref(&env, &repo, &format!("refs/isolate/{id}/base")),
            "{id}"
        );
    }
    let tip = env.git(&repo, ["rev-parse", &format!("isolate/{unmerged}")]);
    let out = env.isolate(env.path(), ["rm", &unmerged]);
    assert_status(&out, 0);
    assert!(
        stderr(&out).contains(&format!("kept branch isolate/{unmerged}"))
            && stderr(&out).contains("1 commit not in main"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        env.git(&repo, ["rev-parse", &format!("isolate/{unmerged}")]),
        tip
    );
    assert!(env.records().is_empty());
    env.assert_fsck(&repo);
}

#[test]
fn prune_settles_branches_of_removed_worktrees_and_branches_no_record_knows() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, merged) = env.worktree_job(&repo, &[], &commit_script("m.txt", "m"));
    let (_, unmerged) = env.worktree_job(&repo, &[], &commit_script("u.txt", "u"));
    let (_, orphan) = env.worktree_job(&repo, &[], &commit_script("o.txt", "o"));
    let (_, landed_orphan) = env.worktree_job(&repo, &[], &commit_script("l.txt", "l"));
    let [merged, unmerged, orphan, landed_orphan] = [&merged, &unmerged, &orphan, &landed_orphan]
        .map(|r| r["id"].as_str().unwrap().to_string());
    assert_status(&env.isolate(&repo, ["merge", "--yes", &merged]), 0);
    // Two branches whose records are gone (an older isolate, a lost state directory): one
    // unmerged, one whose commit main has.
    env.git(&repo, ["cherry-pick", &format!("isolate/{landed_orphan}")]);
    for id in [&orphan, &landed_orphan] {
        fs::remove_dir_all(env.state.join("jobs").join(id)).unwrap();
    }
    let unmerged_tip = env.git(&repo, ["rev-parse", &format!("isolate/{unmerged}")]);
    let orphan_tip = env.git(&repo, ["rev-parse", &format!("isolate/{orphan}")]);

    let line = |lines: &serde_json::Value, id: &str| -> serde_json::Value {
        lines
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["id"].as_str().is_some_and(|i| i.ends_with(id)))
            .unwrap_or_else(|| panic!("{id} not in {lines}"))
            .clone()
    };
    let dry = env.isolate(&repo, ["prune", "--dry-run", "--json"]);
    assert_status(&dry, 0);
    let dry = json(&dry);
    assert_eq!(line(&dry, &merged)["branch"], "would delete");
    assert_eq!(line(&dry, &unmerged)["action"], "kept");
    assert_eq!(line(&dry, &orphan)["action"], "kept");
    assert!(
        line(&dry, &orphan)["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("log main..isolate/{orphan}")),
        "{dry}"
    );
    assert_eq!(line(&dry, &landed_orphan)["branch"], "would delete");
    assert!(has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{merged}")
    ));

    let done = env.isolate(&repo, ["prune", "--json"]);
    assert_status(&done, 0);
    let done = json(&done);
    assert_eq!(line(&done, &merged)["branch"], "deleted");
    assert_eq!(line(&done, &landed_orphan)["branch"], "deleted");
    assert!(!has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{merged}")
    ));
    assert!(!has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{landed_orphan}")
    ));
    assert_eq!(
        env.git(&repo, ["rev-parse", &format!("isolate/{unmerged}")]),
        unmerged_tip
    );
    assert_eq!(
        env.git(&repo, ["rev-parse", &format!("isolate/{orphan}")]),
        orphan_tip
    );
    // The unmerged job stays on record, so it can still be merged by its id.
    assert_status(&env.isolate(&repo, ["merge", "--yes", &unmerged]), 0);
    assert!(repo.join("u.txt").exists());
    env.assert_fsck(&repo);
}

#[test]
fn a_worktree_rm_force_left_behind_stays_listed_and_prune_settles_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, report) = env.worktree_job(&repo, &[], "echo draft > draft.txt");
    let id = report["id"].as_str().unwrap().to_string();
    let path = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    assert_status(&env.isolate(env.path(), ["rm", &id]), 1);
    let out = env.isolate(env.path(), ["rm", "--force", &id]);
    assert_status(&out, 0);
    assert!(stderr(&out).contains("forgotten"), "{}", stderr(&out));
    assert!(path.join("draft.txt").exists());
    // Forgotten: no job any more, but the worktree is in view.
    let ps: serde_json::Value = json(&env.isolate(env.path(), ["ps", "--all", "--json"]));
    assert!(ps.as_array().unwrap().is_empty(), "{ps}");
    assert_status(&env.isolate(env.path(), ["status", &id]), 1);
    let rows = json(&env.isolate(env.path(), ["worktrees", "--json"]));
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap_or_else(|| panic!("{id} not listed: {rows}"))
        .clone();
    let marks: Vec<&str> = row["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        marks.contains(&"forgotten") && marks.contains(&"dirty (1)"),
        "{marks:?}"
    );
    // It holds work: prune keeps it.
    let out = json(&env.isolate(env.path(), ["prune", "--json"]));
    assert!(
        out.as_array()
            .unwrap()
            .iter()
            .any(|l| l["id"] == id.as_str() && l["action"] == "kept"),
        "{out}"
    );
    assert!(path.join("draft.txt").exists());
    // Once it holds nothing, prune removes it, its branch and the tombstone.
    fs::remove_file(path.join("draft.txt")).unwrap();
    let out = json(&env.isolate(env.path(), ["prune", "--json"]));
    assert!(
        out.as_array()
            .unwrap()
            .iter()
            .any(|l| l["id"] == id.as_str() && l["action"] == "removed"),
        "{out}"
    );
    assert!(!path.exists());
    assert!(env.isolate_branches(&repo).is_empty());
    assert!(!has_ref(&env, &repo, &format!("refs/isolate/{id}/base")));
    assert!(json(&env.isolate(env.path(), ["worktrees", "--json"]))
        .as_array()
        .unwrap()
        .is_empty());
    env.assert_fsck(&repo);
}

/// A name the job chose with control characters in it (a branch named with C1 controls, which git
/// takes) reaches the user's terminal visible, never obeyed, from every message that names it:
/// the end of the job, `rm`, `rm --force`, `status`, `worktrees`.
#[test]
fn a_name_the_job_chose_never_drives_the_users_terminal() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        "git checkout -qb \"$(printf 'side\\302\\2332J\\302\\2350;T')\" && echo x > side.txt && \
         git add side.txt && git commit -qm side && git checkout -q -",
    );
    let id = report["id"].as_str().unwrap().to_string();
    let mut said = vec![stderr(&out)];
    for args in [
        vec!["rm", id.as_str()],
        vec!["status", id.as_str()],
        vec!["rm", "--force", id.as_str()],
        vec!["worktrees"],
    ] {
        let out = env.isolate(env.path(), &args);
        said.push(format!("{}{}", stdout(&out), stderr(&out)));
    }
    let all = said.concat();
    assert!(all.contains("side"), "{all}");
    assert!(
        !all.contains('\u{9b}') && !all.contains('\u{9d}') && all.contains("sideM-^[2J"),
        "{all:?}"
    );
}

/// What `prune` did or would do with one worktree: (action, branch), with `would` forms mapped to
/// what they predict.
fn predictions(lines: &serde_json::Value) -> BTreeMap<String, (String, String)> {
    lines
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let action = l["action"]
                .as_str()
                .unwrap()
                .replace("would remove", "removed");
            let branch = l["branch"]
                .as_str()
                .unwrap_or("none")
                .replace("would delete", "deleted");
            (l["id"].as_str().unwrap().to_string(), (action, branch))
        })
        .collect()
}

#[test]
fn prune_dry_run_and_worktrees_predict_exactly_what_prune_does() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let keep = |script: &str| -> String {
        let (out, report) = env.worktree_job(&repo, &["--keep"], script);
        assert_status(&out, 0);
        report["id"].as_str().unwrap().to_string()
    };
    let mut states: BTreeMap<&str, String> = BTreeMap::new();
    states.insert("clean", keep("true"));
    states.insert("dirty", keep("echo x > untracked.txt"));
    states.insert("commits", keep(&commit_script("c.txt", "c")));
    states.insert(
        "tag only",
        keep(&format!(
            "{} && git tag work && git reset -q --hard HEAD~1",
            commit_script("t.txt", "t")
        )),
    );
    states.insert(
        "detached only",
        keep(&format!(
            "git checkout -q --detach && {}",
            commit_script("d.txt", "d")
        )),
    );
    states.insert("after sync", keep("echo pending > pending.txt"));
    states.insert("squash-merged", keep(&commit_script("s.txt", "s")));
    states.insert("missing", keep("true"));
    states.insert("running", start(&env, &repo, &[], "sleep 300"));
    let lost = start(&env, &repo, &[], "echo work > work.txt; sleep 300");
    states.insert("lost", lost.clone());

    commit_on_main(&env, &repo, "main.txt", "main moved\n");
    assert_status(&env.isolate(&repo, ["sync", &states["after sync"]]), 0);
    env.git(
        &repo,
        [
            "merge",
            "-q",
            "--squash",
            &format!("isolate/{}", states["squash-merged"]),
        ],
    );
    env.git(&repo, ["commit", "-q", "-m", "squash"]);
    let missing = PathBuf::from(
        status(&env, &states["missing"])["worktree"]["path"]
            .as_str()
            .unwrap(),
    );
    fs::remove_dir_all(&missing).unwrap();
    let supervisor = status(&env, &lost)["supervisor_pid"].as_i64().unwrap() as i32;
    assert!(wait_until(Duration::from_secs(30), || {
        let record = status(&env, &lost);
        record["worktree"]["path"]
            .as_str()
            .is_some_and(|p| Path::new(p).join("work.txt").exists())
    }));
    // SAFETY: kill(2) on the supervisor this test started.
    unsafe { libc::kill(supervisor, libc::SIGKILL) };
    assert!(wait_until(Duration::from_secs(10), || status(&env, &lost)
        ["state"]
        == "lost"));

    let rows = json(&env.isolate(env.path(), ["worktrees", "--json"]));
    let dry = json(&env.isolate(env.path(), ["prune", "--dry-run", "--json"]));
    let before_dry_run_twice = json(&env.isolate(env.path(), ["prune", "--dry-run", "--json"]));
    assert_eq!(
        predictions(&dry),
        predictions(&before_dry_run_twice),
        "a dry run changed something"
    );
    let done = json(&env.isolate(env.path(), ["prune", "--json"]));
    let (dry, done) = (predictions(&dry), predictions(&done));
    for (state, id) in &states {
        assert_eq!(
            dry.get(id),
            done.get(id),
            "{state}: --dry-run said {:?}, prune did {:?}",
            dry.get(id),
            done.get(id)
        );
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id.as_str())
            .unwrap_or_else(|| panic!("{state} not in worktrees: {rows}"));
        let predicted = row["prune"]
            .as_str()
            .unwrap()
            .replace("would remove", "removed");
        assert_eq!(
            Some(&predicted),
            done.get(id).map(|d| &d.0),
            "{state}: worktrees said {row}"
        );
    }
    // And what prune did is what a careful user expects of each state.
    let expect = |state: &str, action: &str| {
        assert_eq!(
            done[&states[state]].0, action,
            "{state}: {:?}",
            done[&states[state]]
        );
    };
    for state in ["clean", "squash-merged", "missing"] {
        expect(state, "removed");
    }
    for state in [
        "dirty",
        "commits",
        "tag only",
        "detached only",
        "after sync",
        "running",
        "lost",
    ] {
        expect(state, "kept");
    }
    assert_eq!(done[&states["squash-merged"]].1, "deleted");
    assert_eq!(done[&states["clean"]].1, "deleted");
    for state in [
        "dirty",
        "tag only",
        "detached only",
        "after sync",
        "commits",
        "running",
        "lost",
    ] {
        let wt = status_path(&env, &states[state]);
        assert!(wt.exists(), "{state}: its worktree went");
    }
    assert!(has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{}", states["commits"])
    ));
    assert!(!has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{}", states["squash-merged"])
    ));
    assert_status(&env.isolate(env.path(), ["stop", &states["running"]]), 0);
    env.assert_fsck(&repo);
}

fn status_path(env: &TestEnv, id: &str) -> PathBuf {
    PathBuf::from(status(env, id)["worktree"]["path"].as_str().unwrap())
}

#[test]
fn the_preview_shows_every_file_the_job_touched_and_no_name_can_rewrite_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("security-check.sh"), "check everything\n").unwrap();
    env.git(&repo, ["add", "security-check.sh"]);
    env.git(&repo, ["commit", "-q", "-m", "check"]);
    // A rename hides the deletion from a rename-detecting diff; a name with an escape sequence
    // would erase the line above it on a terminal.
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        "git mv security-check.sh docs-notes.txt && echo notes >> docs-notes.txt && \
         touch \"$(printf 'harmless.txt\\033[1A\\033[2K\\r  only-docs.md')\" && \
         git add -A && git commit -q -m docs",
    );
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    env.git(&repo, ["config", "diff.renames", "true"]);
    let out = env.isolate(&repo, ["merge", "--yes", id]);
    assert_status(&out, 0);
    let preview = stderr(&out);
    assert!(preview.contains("changing 3 files"), "{preview}");
    assert!(
        preview.contains("  D security-check.sh\n") && preview.contains("  A docs-notes.txt\n"),
        "{preview}"
    );
    assert!(
        preview.contains("harmless.txt^[[1A^[[2K^M  only-docs.md") && !preview.contains('\u{1b}'),
        "{preview:?}"
    );
}

#[test]
fn commits_imported_late_are_never_settled_in_the_same_step() {
    // The job's end could not import its last commit (an object it needed was missing); the
    // project later came to have that object, so the next import succeeds. What it brings is new
    // in the project: prune keeps it all, and rm keeps the branch.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, first) = env.worktree_job(&repo, &["--keep"], &commit_script("a.txt", "a"));
    let id = first["id"].as_str().unwrap().to_string();
    assert_status(&env.isolate(&repo, ["merge", "--yes", &id]), 0);
    let empty = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
    let out = env.isolate(
        &repo,
        [
            "run",
            "--resume",
            &id,
            "--",
            "sh",
            "-c",
            &format!(
                ": > empty.txt && echo precious > work.txt && git add empty.txt work.txt && \
                 git commit -q -m precious && rm -f .git/objects/{}/{}",
                &empty[..2],
                &empty[2..]
            ),
        ],
    );
    assert_status(&out, 0);
    let wt = PathBuf::from(status(&env, &id)["worktree"]["path"].as_str().unwrap());
    assert!(
        wt.join("work.txt").exists(),
        "the failed import lost the worktree"
    );
    let precious = env.git(&wt, ["rev-parse", "HEAD"]);
    // The project comes to have the empty blob.
    commit_on_main(&env, &repo, "init.py", "");
    let dry = json(&env.isolate(&repo, ["prune", "--dry-run", "--json"]));
    let done = json(&env.isolate(&repo, ["prune", "--json"]));
    assert_eq!(
        predictions(&dry).get(&id),
        predictions(&done).get(&id),
        "{dry} / {done}"
    );
    assert_eq!(predictions(&done)[&id].0, "kept", "{done}");
    assert!(wt.join("work.txt").exists(), "prune removed unmerged work");
    // rm imports it now, removes the clean worktree, and keeps the branch that holds it.
    let out = env.isolate(&repo, ["rm", &id]);
    assert_status(&out, 0);
    assert!(stderr(&out).contains("kept branch"), "{}", stderr(&out));
    assert_eq!(
        env.git(&repo, ["rev-parse", &format!("isolate/{id}")]),
        precious
    );
    env.assert_fsck(&repo);
}

#[test]
fn the_preview_lists_what_the_merge_changes_when_histories_criss_cross() {
    // Two merges on main make two merge bases; the job's tip merges both sides and undoes one
    // side's change. git merges against a base of its own making, so the merge changes `g` too,
    // which a preview of merge-base...tip (with one of the bases) never lists.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let git = |args: &[&str]| env.git(&repo, args);
    fs::write(repo.join("f"), "x\n").unwrap();
    fs::write(repo.join("g"), "1\n").unwrap();
    git(&["add", "f", "g"]);
    git(&["commit", "-q", "-m", "f and g"]);
    git(&["checkout", "-q", "-b", "fix"]);
    fs::write(repo.join("f"), "y\n").unwrap();
    git(&["commit", "-q", "-am", "fix f"]);
    git(&["checkout", "-q", "main"]);
    git(&["checkout", "-q", "-b", "other"]);
    fs::write(repo.join("g"), "2\n").unwrap();
    git(&["commit", "-q", "-am", "change g"]);
    git(&["checkout", "-q", "main"]);
    git(&["merge", "-q", "--no-ff", "--no-edit", "fix"]);
    git(&["merge", "-q", "--no-ff", "--no-edit", "other"]);
    let script = "set -e; P1=$(git rev-parse HEAD^1); P2=$(git rev-parse HEAD^2); \
        echo job > job.txt; git add job.txt; \
        T0=$(git commit-tree $(git write-tree) -p $P1 -p $P2 -m tmp); \
        FORK=$(git merge-base HEAD $T0); \
        if [ $FORK = $P1 ]; then OTHER=$P2; else OTHER=$P1; fi; \
        B=$(git merge-base $P1 $P2); \
        for f in $(git diff --name-only $B $OTHER); do git checkout $FORK -- $f; done; \
        T=$(git commit-tree $(git write-tree) -p $P1 -p $P2 -m 'add job.txt'); \
        git reset -q --hard $T";
    let (out, report) = env.worktree_job(&repo, &[], script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    let before = env.git(&repo, ["rev-parse", "main"]);
    let out = env.isolate(&repo, ["merge", "--yes", id]);
    assert_status(&out, 0);
    // Whatever the merge changed on main, the preview listed.
    let changed = env.git(
        &repo,
        ["diff", "--name-only", "--no-renames", &before, "main"],
    );
    for file in changed.lines() {
        assert!(
            stderr(&out)
                .lines()
                .any(|l| l.trim_start().ends_with(&format!(" {file}"))),
            "{file} changed but was not shown:\n{}",
            stderr(&out)
        );
    }
}

#[test]
fn merge_never_overwrites_the_users_ignored_files_nor_leaves_the_checkout_half_merged() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join(".gitignore"), "target/\n.env\ndata/\n").unwrap();
    env.git(&repo, ["commit", "-q", "-am", "ignore"]);
    // The user's ignored files: a secret and a directory of data.
    fs::write(repo.join(".env"), "SECRET=the users\n").unwrap();
    fs::create_dir_all(repo.join("data/sub")).unwrap();
    fs::write(repo.join("data/big.csv"), "a,b\n").unwrap();
    for (what, script) in [
        (".env", "echo SECRET=attacker > .env && git add -f .env && git commit -q -m env"),
        ("data/", "echo not a directory > data && git add -f data && git commit -q -m data"),
        (
            "a name too long for the filesystem",
            "echo changed > README && for i in 1 2 3; do echo $i > new$i; done && \
             git add README new1 new2 new3 && \
             git update-index --add --cacheinfo 100644,$(echo hi | git hash-object -w --stdin),\"zz/$(printf 'z%.0s' $(seq 1 300))\" && \
             git commit -q -m long",
        ),
    ] {
        let (out, report) = env.worktree_job(&repo, &[], script);
        assert_status(&out, 0);
        let id = report["id"].as_str().unwrap();
        let main = env.git(&repo, ["rev-parse", "main"]);
        let out = env.isolate(&repo, ["merge", "--yes", id]);
        assert_status(&out, 1);
        assert_eq!(env.git(&repo, ["rev-parse", "main"]), main, "{what}");
        assert_eq!(env.git(&repo, ["status", "--porcelain"]), "", "{what}: half-merged");
        assert_eq!(
            fs::read_to_string(repo.join(".env")).unwrap(),
            "SECRET=the users\n",
            "{what}"
        );
        assert!(repo.join("data/big.csv").exists(), "{what}");
        assert_eq!(fs::read_to_string(repo.join("README")).unwrap(), "hello\n", "{what}");
        assert!(!repo.join("new1").exists(), "{what}");
    }
}

/// A blob a thousand times its packed size (a gibibyte of one byte, a megabyte compressed) passes
/// the import's bounds; checked out, it filled the user's memory and disk. The merge refuses to
/// write more than a gibibyte, saying so, and the checkout is as it was.
#[test]
fn merge_refuses_to_write_a_blob_far_larger_than_it_was_packed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let bomb = env.file(
        "bomb.py",
        "import hashlib, os, zlib\n\
         n = (1 << 30) + 1\n\
         head = b'blob %d\\0' % n\n\
         h, c = hashlib.sha1(head), zlib.compressobj(1)\n\
         out, chunk, left = [c.compress(head)], b'A' * (1 << 24), n\n\
         while left:\n    part = chunk[:min(left, len(chunk))]\n    h.update(part)\n    \
         out.append(c.compress(part))\n    left -= len(part)\n\
         out.append(c.flush())\n\
         d = h.hexdigest()\n\
         os.makedirs('.git/objects/' + d[:2], exist_ok=True)\n\
         open('.git/objects/%s/%s' % (d[:2], d[2:]), 'wb').write(b''.join(out))\n\
         print(d)\n",
    );
    let script = format!(
        "id=$(python3 {}) && git update-index --add --cacheinfo 100644,$id,logo.bin && \
         echo small > small.txt && git add small.txt && git commit -q -m assets",
        bomb.display()
    );
    let (out, report) = env.worktree_job(&repo, &[], &script);
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    let main = env.git(&repo, ["rev-parse", "main"]);
    let out = env.isolate(&repo, ["merge", "--yes", id]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("MiB"), "{}", stderr(&out));
    assert_eq!(env.git(&repo, ["rev-parse", "main"]), main);
    assert!(!repo.join("logo.bin").exists() && !repo.join("small.txt").exists());
    assert_eq!(env.git(&repo, ["status", "--porcelain"]), "");
}

#[test]
fn work_held_in_a_merge_commit_is_never_taken_for_merged() {
    // The job merges main into its branch and folds its work into that merge (an amend): git
    // cherry passes over merges, so the work looked merged, and rm deleted the branch.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = start(
        &env,
        &repo,
        &["--keep"],
        "while [ ! -f go ]; do sleep 0.05; done; git fetch -q project && \
         git merge -q --no-ff --no-edit project/main && echo work > work.txt && git add work.txt && \
         git commit -q --amend --no-edit",
    );
    commit_on_main(&env, &repo, "main.txt", "main\n");
    let wt = PathBuf::from(status(&env, &id)["worktree"]["path"].as_str().unwrap());
    fs::write(wt.join("go"), "").unwrap();
    wait(&env, &id);
    fs::remove_file(wt.join("go")).unwrap();
    let rows = json(&env.isolate(env.path(), ["worktrees", "--json"]));
    assert!(
        !rows[0]["marks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m == "merged"),
        "{rows}"
    );
    assert_status(&env.isolate(env.path(), ["rm", &id]), 0);
    assert!(
        has_ref(&env, &repo, &format!("refs/heads/isolate/{id}")),
        "rm deleted the work"
    );
}

#[test]
fn a_branch_a_checkout_holds_is_never_deleted_nor_moved_behind_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // A merged job whose branch the user has checked out in a linked worktree of the project.
    let (_, merged) = env.worktree_job(&repo, &[], &commit_script("m.txt", "m"));
    let merged = merged["id"].as_str().unwrap().to_string();
    assert_status(&env.isolate(&repo, ["merge", "--yes", &merged]), 0);
    let linked = env.path().join("linked");
    env.git(
        &repo,
        [
            "worktree",
            "add",
            "-q",
            linked.to_str().unwrap(),
            &format!("isolate/{merged}"),
        ],
    );
    let out = json(&env.isolate(&repo, ["prune", "--json"]));
    assert!(
        has_ref(&env, &repo, &format!("refs/heads/isolate/{merged}")),
        "{out}"
    );
    assert_status(&env.isolate(env.path(), ["rm", &merged]), 0);
    assert!(has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{merged}")
    ));
    // Now an orphan, checked out in the project's own checkout, with commits of the user's.
    env.git(&linked, ["checkout", "-q", "--detach"]);
    env.git(&repo, ["checkout", "-q", &format!("isolate/{merged}")]);
    commit_on_main(&env, &repo, "users.txt", "the user's\n");
    json(&env.isolate(&repo, ["prune", "--json"]));
    assert!(has_ref(
        &env,
        &repo,
        &format!("refs/heads/isolate/{merged}")
    ));
    env.git(&repo, ["checkout", "-q", "main"]);

    // merge never moves a branch that a checkout is rebasing.
    let (_, job) = env.worktree_job(&repo, &[], &commit_script("j.txt", "j"));
    let job = job["id"].as_str().unwrap().to_string();
    commit_on_main(&env, &repo, "r1.txt", "1\n");
    env.git(&linked, ["checkout", "-q", "-b", "topic", "main~1"]);
    fs::write(linked.join("r1.txt"), "conflicting\n").unwrap();
    env.git(&linked, ["add", "r1.txt"]);
    env.git(&linked, ["commit", "-q", "-m", "topic"]);
    let _ = env.git_output(&repo, ["rebase", "-q", "topic"]);
    assert!(
        repo.join(".git/rebase-merge/head-name").exists()
            || repo.join(".git/rebase-apply").exists()
    );
    let head = fs::read_to_string(repo.join(".git/rebase-merge/head-name")).unwrap_or_default();
    assert_eq!(head.trim(), "refs/heads/main");
    let main = env.git(&repo, ["rev-parse", "refs/heads/main"]);
    let out = env.isolate(&repo, ["merge", "--yes", &job]);
    assert_status(&out, 1);
    assert!(stderr(&out).contains("being rebased"), "{}", stderr(&out));
    assert_eq!(env.git(&repo, ["rev-parse", "refs/heads/main"]), main);
    env.git(&repo, ["rebase", "--abort"]);
}

#[test]
fn a_branch_checked_out_at_a_path_that_is_not_utf8_is_never_deleted() {
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (_, merged) = env.worktree_job(&repo, &[], &commit_script("m.txt", "m"));
    let merged = merged["id"].as_str().unwrap().to_string();
    assert_status(&env.isolate(&repo, ["merge", "--yes", &merged]), 0);
    // A checkout named in Latin-1 (`café`): a path, but not UTF-8.
    let linked = env.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    let branch = format!("isolate/{merged}");
    env.git(
        &repo,
        [
            std::ffi::OsStr::new("worktree"),
            "add".as_ref(),
            "-q".as_ref(),
            linked.as_os_str(),
            branch.as_ref(),
        ],
    );
    let out = json(&env.isolate(&repo, ["prune", "--json"]));
    assert!(
        has_ref(&env, &repo, &format!("refs/heads/{branch}")),
        "deleted behind the checkout at {}: {out}",
        linked.display()
    );
}

#[test]
fn merge_from_a_checkout_of_a_bare_clone_fast_forwards_that_checkout() {
    let env = TestEnv::new();
    let origin = env.repo("origin");
    // The bare clone whose checkouts are all linked, beside it: the bare one checks out nothing.
    let bare = env.path().join("app/repo.git");
    env.git(
        env.path(),
        [
            "clone",
            "-q",
            "--bare",
            origin.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let repo = env.path().join("app/main");
    let branch = env.git(&origin, ["symbolic-ref", "--short", "HEAD"]);
    env.git(
        &bare,
        ["worktree", "add", "-q", repo.to_str().unwrap(), &branch],
    );
    let (_, job) = env.worktree_job(&repo, &[], &commit_script("m.txt", "m"));
    let job = job["id"].as_str().unwrap().to_string();
    let out = env.isolate(&repo, ["merge", "--yes", &job]);
    assert_status(&out, 0);
    assert_eq!(fs::read_to_string(repo.join("m.txt")).unwrap(), "m\n");
}

#[test]
fn prune_of_another_state_directory_leaves_a_running_jobs_branch_alone() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = start(&env, &repo, &[], "sleep 300");
    let other = env.path().join("other-state");
    fs::create_dir_all(&other).unwrap();
    let out = env.isolate_with(
        &repo,
        &[("ISOLATE_HOME", other.to_str().unwrap())],
        &["prune", "--json"],
    );
    assert_status(&out, 0);
    assert!(
        has_ref(&env, &repo, &format!("refs/heads/isolate/{id}")),
        "{}",
        stdout(&out)
    );
    assert!(has_ref(&env, &repo, &format!("refs/isolate/{id}/base")));
    assert_status(&env.isolate(env.path(), ["stop", &id]), 0);
}

/// Files that change what runs in the project (isolate's configuration, CI, hooks) are listed
/// first, whatever the count and however the other names sort: sixty files named to sort before
/// `.` cannot push `.isolate.toml` out of sight.
#[test]
fn the_preview_lists_what_changes_what_runs_first() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = env.worktree_job(
        &repo,
        &[],
        "for i in $(seq -w 1 60); do echo $i > \"!$i.txt\"; done && \
         printf 'policy = \"default\"\\n' > .isolate.toml && \
         mkdir -p .github/workflows && echo 'on: push' > .github/workflows/ci.yml && \
         git add -A && git commit -q -m many",
    );
    assert_status(&out, 0);
    let id = report["id"].as_str().unwrap();
    let out = env.isolate(&repo, ["merge", "--yes", id]);
    assert_status(&out, 0);
    let preview = stderr(&out);
    let lines: Vec<&str> = preview.lines().collect();
    assert!(lines[0].contains("changing 62 files:"), "{preview}");
    assert!(lines[1].contains("read these first"), "{preview}");
    let first: Vec<&str> = lines[2..4].to_vec();
    assert!(
        first
            .iter()
            .any(|l| l.starts_with("  A .isolate.toml  (isolate's configuration"))
            && first
                .iter()
                .any(|l| l.starts_with("  A .github/workflows/ci.yml  (CI)")),
        "{preview}"
    );
    assert_eq!(lines[4], "  and 60 other files:", "{preview}");
    assert!(lines[5].starts_with("  A !01.txt"), "{preview}");
}
