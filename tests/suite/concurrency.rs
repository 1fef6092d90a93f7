//! Many jobs at once in one repository.

use std::thread;

use crate::support::*;

#[test]
fn ten_jobs_at_once_each_commit() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let children: Vec<_> = (0..10)
        .map(|i| {
            let script =
                format!("echo {i} > job-{i}.txt && git add . && git commit -q -m 'job {i}'");
            env.isolate_cmd(
                &repo,
                [
                    "run",
                    "--worktree",
                    "--name",
                    "parallel",
                    "-q",
                    "--",
                    "sh",
                    "-c",
                    &script,
                ],
            )
            .spawn()
            .unwrap()
        })
        .collect();
    let outs: Vec<_> = thread::scope(|s| {
        let handles: Vec<_> = children
            .into_iter()
            .map(|c| s.spawn(move || finish(c, LIMIT)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for out in &outs {
        assert_status(out, 0);
    }
    let branches = env.isolate_branches(&repo);
    assert_eq!(branches.len(), 10, "{branches:?}");
    let mut files: Vec<String> = branches
        .iter()
        .map(|b| env.git(&repo, ["diff", "--name-only", "main", b]))
        .collect();
    files.sort();
    let mut expected: Vec<String> = (0..10).map(|i| format!("job-{i}.txt")).collect();
    expected.sort();
    assert_eq!(files, expected);
    assert!(env.worktree_dirs().is_empty(), "{:?}", env.worktree_dirs());
    env.assert_fsck(&repo);
    let records = env.records();
    assert_eq!(records.len(), 10);
    assert!(records
        .iter()
        .all(|r| r["state"] == "exited" && r["worktree"]["commits"] == 1));
}
