//! Jobs started inside a job (docs/cli.md, "Nested jobs"): an orchestrator running under isolate
//! fans out jobs of its own, whose worktrees are cut from its worktree, whose commits import into
//! its repository and reach the project with its own. The attacks from an inner job on the outer
//! one are in escapes.rs.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// `isolate run --worktree --report FILE -- bash -c SCRIPT` in `repo`, `$ISOLATE` being isolate's
/// binary inside: its output and report.
fn outer_job(env: &TestEnv, repo: &Path, script: &str) -> (std::process::Output, Value) {
    let script = format!("ISOLATE={BIN}\nset -u\n{script}");
    let report = env.path().join("outer.json");
    let out = env.isolate(
        repo,
        [
            "run",
            "--worktree",
            "--name",
            "outer",
            "--report",
            report.to_str().unwrap(),
            "--",
            "bash",
            "-c",
            &script,
        ],
    );
    let value = fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out, value)
}

#[test]
fn an_orchestrator_in_a_job_runs_three_jobs_and_their_merged_work_reaches_the_project() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = outer_job(
        &env,
        &repo,
        r#"for i in 1 2 3; do
             "$ISOLATE" run --worktree --name sub$i -- \
               sh -c "echo work $i > f$i && git add f$i && git commit -qm 'sub $i'" || exit 10
           done
           echo "--- ps"; "$ISOLATE" ps --all
           echo "--- branches"; git branch --format='%(refname:short)'
           "$ISOLATE" merge --all --yes || exit 11
           echo "--- merged"; git log --format=%s
        "#,
    );
    assert_status(&out, 0);
    let said = stdout(&out);
    let listed = |section: &str| {
        said.split("--- ")
            .find(|s| s.starts_with(section))
            .unwrap_or_default()
            .to_string()
    };
    for i in 1..=3 {
        // Inside the outer job, its jobs are the ones `ps` shows, and their branches its own.
        assert!(listed("ps").contains(&format!("sub{i}-")), "{said}");
        assert!(
            listed("branches").contains(&format!("isolate/sub{i}-")),
            "{said}"
        );
        assert!(listed("merged").contains(&format!("sub {i}")), "{said}");
    }
    let outer = report["id"].as_str().unwrap();
    let branch = format!("isolate/{outer}");
    // The outer job's branch holds the three jobs' work in the project, merged.
    for i in 1..=3 {
        let file = env.git(&repo, ["show", &format!("{branch}:f{i}")]);
        assert_eq!(file.trim(), format!("work {i}"));
    }
    env.assert_fsck(&repo);
    // Only the outer job's branch reached the project: the inner ones are the outer job's.
    assert_eq!(env.isolate_branches(&repo), vec![branch]);
    // Its worktree held nothing the project lacks once merged, so it went, inner state with it.
    assert_eq!(report["worktree"]["removed"], true, "{report}");
    assert!(env.worktree_dirs().is_empty());
    let nested: Vec<&str> = report["worktree"]["nested_jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(nested.len(), 3, "{report}");
    assert!(nested.iter().all(|id| id.starts_with("sub")), "{report}");
    // From outside, `status` of the outer job names them.
    let status = env.isolate(&repo, ["status", outer]);
    assert_status(&status, 0);
    for id in nested {
        assert!(stdout(&status).contains(id), "{}", stdout(&status));
    }
}

#[test]
fn unmerged_inner_work_and_an_inner_worktree_left_keep_the_outer_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = outer_job(
        &env,
        &repo,
        r#""$ISOLATE" run --worktree --name done -- sh -c 'echo a > a && git add a && git commit -qm a'
           "$ISOLATE" run --worktree --name wip -- sh -c 'echo half > half'
           echo "--- worktrees"; "$ISOLATE" worktrees
        "#,
    );
    assert_status(&out, 0);
    // Inside the outer job, `worktrees` shows the inner job's kept one.
    let said = stdout(&out);
    let listing = said.split("--- worktrees").nth(1).unwrap_or_default();
    assert!(listing.contains("wip-"), "{said}");
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    let reason = report["worktree"]["reason"].as_str().unwrap();
    // The imported branch nobody merged, and the worktree left with uncommitted work.
    assert!(reason.contains("isolate/done-"), "{reason}");
    assert!(
        reason.contains("the worktree of nested job wip-"),
        "{reason}"
    );
    let outer = report["id"].as_str().unwrap();
    let nested = env.state.join("jobs").join(outer).join("nested");
    let kept: Vec<_> = fs::read_dir(nested.join("worktrees"))
        .unwrap()
        .flatten()
        .flat_map(|key| fs::read_dir(key.path()).unwrap().flatten())
        .map(|wt| wt.path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(fs::read_to_string(kept[0].join("half")).unwrap(), "half\n");
}

#[test]
fn a_job_in_a_job_without_worktrees_keeps_its_state_in_the_outer_jobs_record_directory() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = env.isolate(
        &repo,
        [
            "run",
            "--",
            "bash",
            "-c",
            &format!(
                "{BIN} run -- sh -c 'echo inner ran' || exit 10\n\
                 ls \"$ISOLATE_NESTED_STATE/jobs\""
            ),
        ],
    );
    assert_status(&out, 0);
    assert!(stdout(&out).contains("inner ran"), "{}", stdout(&out));
    assert!(stdout(&out).contains("sh-"), "{}", stdout(&out));
    // Nothing of the inner job among the user's jobs: one record, the outer job's, whose
    // directory holds the inner one's.
    let records = env.records();
    assert_eq!(records.len(), 1);
    let outer = records[0]["id"].as_str().unwrap();
    let inner = fs::read_dir(env.state.join("jobs").join(outer).join("nested/jobs"))
        .unwrap()
        .count();
    assert_eq!(inner, 1);
}

/// Inside a job, an inner job started under `policy` (a file) is refused, saying `why`, and
/// nothing of it is left.
fn assert_refused_inside(policy_text: &str, why: &str) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let policy = env.file("inner.toml", policy_text);
    let (out, report) = outer_job(
        &env,
        &repo,
        &format!(
            r#""$ISOLATE" run --worktree --policy {} -- true
           echo "inner status $?"
           ls -A "$ISOLATE_NESTED_STATE/jobs" "$ISOLATE_NESTED_STATE"/worktrees/* 2>/dev/null | grep -c -- '-[0-9a-f]\{{4\}}$' || true
           git branch --format='%(refname:short)'
        "#,
            policy.display()
        ),
    );
    assert_status(&out, 0);
    let said = stdout(&out);
    assert!(said.contains("inner status 125"), "{said}");
    assert!(stderr(&out).contains(why), "{}", stderr(&out));
    // No inner record, worktree or branch was left.
    assert!(said.lines().any(|l| l == "0"), "{said}");
    assert!(!said.contains("isolate/true-"), "{said}");
    assert_eq!(report["worktree"]["removed"], true, "{report}");
}

#[test]
fn a_job_in_a_job_with_a_domain_allowlist_or_port_lists_is_refused_before_anything_is_made() {
    // Its connects are the outer job's broker's to make, outside its Landlock domain: a proxy
    // address or a port list of its own would hold nothing.
    assert_refused_inside(
        "extends = \"default\"\n[network]\nallow = [\"example.com\"]\n",
        "cannot have a domain allowlist",
    );
    assert_refused_inside(
        "extends = \"default\"\n[network]\nconnect = [443]\n",
        "cannot have TCP port lists",
    );
}

#[test]
fn an_outer_jobs_state_linked_elsewhere_names_no_nested_jobs_and_keeps_nothing() {
    // The nested state is the outer job's to write: links in it to a directory of the user's
    // (their own state directory, say) must not make its end list what lies there as nested jobs,
    // nor keep the outer worktree for it; and the directory itself, isolate's, it cannot replace.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let elsewhere = env.path().join("elsewhere");
    fs::create_dir_all(elsewhere.join("jobs/outside-ab12")).unwrap();
    fs::create_dir_all(elsewhere.join("worktrees/key/outside-cd34")).unwrap();
    let (out, report) = outer_job(
        &env,
        &repo,
        &format!(
            "mv \"$ISOLATE_NESTED_STATE\" \"$ISOLATE_NESTED_STATE.moved\" 2>/dev/null && echo MOVED\n\
             rmdir \"$ISOLATE_NESTED_STATE\" 2>/dev/null && echo REMOVED\n\
             ln -s '{0}/jobs' \"$ISOLATE_NESTED_STATE/jobs\"\n\
             ln -s '{0}/worktrees' \"$ISOLATE_NESTED_STATE/worktrees\"\n\
             ls \"$ISOLATE_NESTED_STATE/jobs/\"",
            elsewhere.display()
        ),
    );
    assert_status(&out, 0);
    assert!(stdout(&out).contains("outside-ab12"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("MOVED"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("REMOVED"), "{}", stdout(&out));
    assert!(report["worktree"].get("nested_jobs").is_none(), "{report}");
    assert_eq!(report["worktree"]["removed"], true, "{report}");
    assert!(elsewhere.join("worktrees/key/outside-cd34").is_dir());
}

#[test]
fn inside_an_offline_job_a_job_starts_with_a_port_block_of_its_own() {
    // The outer policy refuses every bind, so no port can be checked free: the inner block is drawn
    // by its lock alone, and is never the outer job's.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = env.isolate(
        &repo,
        [
            "run",
            "--worktree",
            "--policy",
            "offline",
            "--",
            "sh",
            "-c",
            &format!(
                "echo \"outer port $ISOLATE_PORT\"\n\
                 {BIN} run --worktree -- sh -c 'echo \"inner port $ISOLATE_PORT\"'"
            ),
        ],
    );
    assert_status(&out, 0);
    let said = stdout(&out);
    let port = |who: &str| -> u16 {
        said.lines()
            .find_map(|l| l.strip_prefix(&format!("{who} port ")))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {who} port: {said}\n{}", stderr(&out)))
    };
    assert_ne!(port("outer"), port("inner"), "{said}");
}

#[test]
fn a_strict_job_inside_a_job_reads_the_real_projects_objects_commits_and_opens_a_pty() {
    // Its worktree borrows the outer job's objects, which borrow the project's: `strict` reads
    // neither by itself, so isolate grants the whole chain. A pty's other end is opened by the
    // outer job's supervisor (the inner filter hands nothing over).
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (out, report) = outer_job(
        &env,
        &repo,
        r#""$ISOLATE" run --worktree --policy strict --name deep -- sh -c '
             git log --format=%s | tr "\n" " "; echo
             cat src/lib.txt
             echo deep > deep && git add deep && git commit -qm deep && echo committed
             python3 -c "import os; m, s = os.openpty(); os.write(s, b\"pty ok\\n\"); print(os.read(m, 16).decode().strip())"
           ' || exit 10
           "$ISOLATE" merge --all --yes >/dev/null || exit 11
        "#,
    );
    assert_status(&out, 0);
    let said = stdout(&out);
    assert!(said.contains("second first"), "{said}");
    assert!(said.contains("library"), "{said}");
    assert!(said.contains("committed"), "{said}");
    assert!(said.contains("pty ok"), "{said}");
    let branch = format!("isolate/{}", report["id"].as_str().unwrap());
    assert_eq!(
        env.git(&repo, ["show", &format!("{branch}:deep")]).trim(),
        "deep"
    );
    env.assert_fsck(&repo);
}

#[test]
fn a_command_isolate_exec_runs_in_a_job_starts_jobs_of_that_job() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let out = env.isolate(
        &repo,
        ["run", "--worktree", "--bg", "--", "sh", "-c", "sleep 30"],
    );
    assert_status(&out, 0);
    let id = stdout(&out).trim().to_string();
    let out = env.isolate(
        env.path(),
        [
            "exec",
            &id,
            "--",
            "sh",
            "-c",
            &format!("{BIN} run --worktree --name sub -- sh -c 'echo x > x && git add x && git commit -qm x'"),
        ],
    );
    assert_status(&out, 0);
    // The inner job's state is the outer job's, its branch in the outer job's repository.
    let jobs = env.state.join("jobs").join(&id).join("nested/jobs");
    let inner: Vec<String> = fs::read_dir(&jobs)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(inner.len(), 1, "{inner:?}");
    assert!(inner[0].starts_with("sub-"), "{inner:?}");
    let out = env.isolate(env.path(), ["stop", &id]);
    assert_status(&out, 0);
}

#[test]
fn a_default_job_inside_a_strict_job_runs_and_still_never_reads_what_it_denies() {
    // Under a strict outer job `/` cannot be listed, so the inner `default` carving takes the
    // entries of `/` (and of every directory it cannot list) from the paths the outer rules grant.
    // The outer policy here re-allows its own ~/.ssh; the inner one denies it, and keeps it denied
    // even when the outer job rewrites that list.
    let env = TestEnv::new();
    let repo = env.repo("app");
    let ssh = env.home.join(".ssh");
    fs::create_dir_all(&ssh).unwrap();
    fs::write(ssh.join("id_test"), "SECRET-KEY\n").unwrap();
    let bin_dir = Path::new(BIN).parent().unwrap();
    let policy = env.file(
        "outer.toml",
        &format!(
            "extends = \"strict\"\n[filesystem]\nread = [\"{}\", \"{}\"]\n",
            bin_dir.display(),
            ssh.display()
        ),
    );
    let script = format!(
        "ISOLATE={BIN}\n\
         echo \"outer: $(cat {key})\"\n\
         $ISOLATE run -q -- /usr/bin/echo inner-ran\n\
         $ISOLATE run -q -- cat {key} || echo inner-refused\n\
         printf '%s\\0' {ssh} {home} / >> \"$ISOLATE_NESTED_STATE/outer-grants\"\n\
         $ISOLATE run -q -- cat {key} || echo tampered-refused\n",
        key = ssh.join("id_test").display(),
        ssh = ssh.display(),
        home = env.home.display(),
    );
    let out = env.isolate(
        &repo,
        [
            "run",
            "--policy",
            policy.to_str().unwrap(),
            "--",
            "bash",
            "-c",
            &script,
        ],
    );
    let text = stdout(&out);
    assert!(
        text.contains("outer: SECRET-KEY"),
        "{text}\n{}",
        stderr(&out)
    );
    assert!(text.contains("inner-ran"), "{text}\n{}", stderr(&out));
    assert!(text.contains("inner-refused"), "{text}\n{}", stderr(&out));
    assert!(
        text.contains("tampered-refused"),
        "{text}\n{}",
        stderr(&out)
    );
    assert_eq!(
        text.matches("SECRET-KEY").count(),
        1,
        "an inner job read the key: {text}"
    );
}
