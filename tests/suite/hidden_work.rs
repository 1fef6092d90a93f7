//! Work a job hides from the cleanup's status: git's own status does not show it, removing the
//! worktree would lose it. A job plants the hiding; the user's later edits through `--resume` are
//! what it would take. Each test asserts the worktree is kept and the edit is still there.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::*;

/// `run --resume ID -- sh -c SCRIPT`: the user's own session in the job's kept worktree.
fn resume(env: &TestEnv, repo: &Path, id: &str, script: &str) -> serde_json::Value {
    let report = env.path().join(format!("resume-{id}.json"));
    let out = env.isolate(
        repo,
        [
            "run",
            "--resume",
            id,
            "--report",
            report.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    assert_status(&out, 0);
    env.report(&report)
}

/// A job's kept worktree, its path and id, after `script` ran in it.
fn kept_job(env: &TestEnv, repo: &Path, script: &str) -> (PathBuf, String) {
    let (out, report) = env.worktree_job(repo, &["--keep"], script);
    assert_status(&out, 0);
    let wt = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    (wt, report["id"].as_str().unwrap().to_string())
}

/// `--skip-worktree` and `--assume-unchanged` make `git status` skip a file however it changes.
#[test]
fn an_edit_to_a_file_the_job_flagged_hidden_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for flag in ["--skip-worktree", "--assume-unchanged"] {
        let (wt, id) = kept_job(&env, &repo, &format!("git update-index {flag} README"));
        let report = resume(&env, &repo, &id, "echo 'the users edit' >> README");
        assert_eq!(report["worktree"]["removed"], false, "{flag}: {report}");
        assert_eq!(
            report["worktree"]["dirty"]["modified"], 1,
            "{flag}: {report}"
        );
        let readme = fs::read_to_string(wt.join("README")).unwrap();
        assert!(readme.contains("the users edit"), "{flag}: {readme}");
    }
}

/// A gitlink in the index over a plain directory: neither git's status nor the walk looks beneath
/// it, whether the directory has no `.git` or one naming a repository outside the worktree.
#[test]
fn files_beneath_a_gitlink_the_job_committed_keep_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let project_git = repo.join(".git");
    for dot_git in [
        String::new(),
        format!("echo 'gitdir: {}' > vendor/.git", project_git.display()),
    ] {
        let script = format!(
            "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),vendor && \
             git commit -q -m vendor && mkdir vendor && {{ {dot_git} :; }}"
        );
        let (wt, id) = kept_job(&env, &repo, &script);
        let report = resume(&env, &repo, &id, "echo notes > vendor/notes.md");
        assert_eq!(report["worktree"]["removed"], false, "{report}");
        let reason = report["worktree"]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("vendor: "), "{report}");
        assert!(wt.join("vendor/notes.md").exists());
    }
}

/// A submodule as cloned (its commits on its remote) holds no work, but what the user keeps in it
/// through `--resume` beside its branches does: a stash entry, a tag on a commit of its own, a
/// checkout of another commit than the project records, a commit only its reflog names.
#[test]
fn a_stash_a_tag_a_reflog_or_another_checkout_in_a_submodule_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let library = env.repo("library");
    let add = format!(
        "git -c protocol.file.allow=always submodule --quiet add {} lib && git commit -q -m lib",
        library.display()
    );
    let keeps = [
        ("a stash entry", "cd lib && echo edit >> README && git stash -q"),
        (
            "a tag on a commit of its own",
            "cd lib && git tag -a -m t v1 $(git commit-tree -m only-tagged HEAD^{tree})",
        ),
        (
            "another commit checked out",
            "cd lib && git commit -q --allow-empty -m local && git update-ref refs/remotes/origin/main HEAD",
        ),
        (
            "a commit only its reflog names",
            "cd lib && echo b > b && git add b && git commit -qm b && git reset -q --hard HEAD~1",
        ),
    ];
    for (what, script) in keeps {
        let (wt, id) = kept_job(&env, &repo, &add);
        let report = resume(&env, &repo, &id, script);
        assert_eq!(report["worktree"]["removed"], false, "{what}: {report}");
        let listed = report["worktree"]["other_refs"].to_string();
        assert!(listed.contains("lib: "), "{what}: {report}");
        assert!(wt.join("lib/.git").exists(), "{what}");
    }
}

/// Work beneath a gitlink of a nested repository that is itself clean and published: the nested
/// repository's own gitlinks are looked into as the job's are.
#[test]
fn work_beneath_a_gitlink_of_a_clean_nested_repository_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = "mkdir -p sub/inner && cd sub && git init -q && echo r > r && git add r && \
        git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,inner && \
        git commit -q -m w && git update-ref refs/remotes/origin/main HEAD && cd .. && \
        git add sub 2>/dev/null && git commit -q -m sub";
    let (wt, id) = kept_job(&env, &repo, script);
    let report = resume(&env, &repo, &id, "echo notes > sub/inner/notes.md");
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    let listed = report["worktree"]["other_refs"].to_string();
    assert!(listed.contains("sub/inner: "), "{report}");
    assert!(wt.join("sub/inner/notes.md").exists());
}

/// Two gitlinks whose work trees share one git directory (the second's `.git` names the first's,
/// a clean submodule as cloned): what lies in the second work tree is no status's. Kept.
#[test]
fn a_second_work_tree_of_a_nested_git_directory_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let library = env.repo("library");
    let add = format!(
        "git -c protocol.file.allow=always submodule --quiet add {} lib && \
         mkdir zz && echo 'gitdir: ../.git/modules/lib' > zz/.git && \
         git update-index --add --cacheinfo 160000,$(git -C lib rev-parse HEAD),zz && \
         git commit -q -m lib",
        library.display()
    );
    let (wt, id) = kept_job(&env, &repo, &add);
    let report = resume(&env, &repo, &id, "echo notes > zz/notes.md");
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    assert!(wt.join("zz/notes.md").exists());
}

/// Ignore rules the job wrote where nobody reviews them: a rule in `.git/info/exclude` (beyond
/// those isolate copied from the project's), or a `.gitignore` the index does not hold in a
/// directory of tracked files, would hide the user's later files as ignored, and ignored files
/// never keep a worktree. Both keep it now, saying why.
#[test]
fn ignore_rules_the_job_wrote_where_nobody_reviews_them_keep_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // The top's own `.gitignore` goes: the job writes one where the index has none.
    env.git(&repo, ["rm", "-q", ".gitignore"]);
    env.git(&repo, ["commit", "-q", "-m", "no ignore rules"]);
    for (plant, reason) in [
        (
            "printf '*\\n' >> .git/info/exclude",
            "a rule in .git/info/exclude the project's has not (*): remove it",
        ),
        (
            "printf '*\\n' > .gitignore",
            "an untracked .gitignore: commit it or delete it",
        ),
        (
            "printf '*\\n' > src/.gitignore",
            "an untracked src/.gitignore: commit it or delete it",
        ),
    ] {
        let (wt, id) = kept_job(&env, &repo, plant);
        let report = resume(&env, &repo, &id, "echo 'the users notes' > src/notes.md");
        assert_eq!(report["worktree"]["removed"], false, "{plant}: {report}");
        let said = report["worktree"]["reason"].as_str().unwrap_or_default();
        assert!(said.contains(reason), "{plant}: {report}");
        assert!(wt.join("src/notes.md").exists(), "{plant}");
    }
}

/// A job that committed and left ignore rules nobody reviews (aider adds `.aider*` to an untracked
/// `.gitignore` by default): its commits come home all the same, and the worktree is kept, saying
/// plainly why and what to do. Once the `.gitignore` goes, so does the worktree.
#[test]
fn an_untracked_gitignore_keeps_the_worktree_never_the_commits() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, ["rm", "-q", ".gitignore"]);
    env.git(&repo, ["commit", "-q", "-m", "no ignore rules"]);
    let mut ids = Vec::new();
    for rules in [
        "printf '.aider*\\n' > .gitignore",
        "printf 'notes\\n' >> .git/info/exclude",
    ] {
        let script = format!(
            "echo work > work.txt && git add work.txt && git commit -q -m work && {rules} && \
             touch .aider.chat.history.md notes"
        );
        let (out, report) = env.worktree_job(&repo, &[], &script);
        assert_status(&out, 0);
        let wt = &report["worktree"];
        assert_eq!(wt["removed"], false, "{rules}: {report}");
        assert_eq!(wt["commits"], 1, "{rules}: {report}");
        let branch = wt["branch"].as_str().unwrap();
        let tip = env.git(&repo, ["rev-parse", branch]);
        assert_eq!(wt["branch_tip"].as_str(), Some(tip.as_str()), "{report}");
        assert_eq!(
            env.git(&repo, ["show", &format!("{branch}:work.txt")]),
            "work"
        );
        let said = stderr(&out);
        assert!(
            said.contains("outcome:  kept: an untracked .gitignore: commit it or delete it")
                || said.contains("outcome:  kept: a rule in .git/info/exclude"),
            "{said}"
        );
        assert!(!said.contains("cannot read the job's repository"), "{said}");
        assert!(said.contains(&format!("branch:   {branch} (1 commit beyond base)")));
        env.assert_fsck(&repo);
        ids.push(report["id"].as_str().unwrap().to_string());
    }
    // The user deletes the file: nothing keeps the worktree any more, and the branch stays.
    let report = resume(
        &env,
        &repo,
        &ids[0],
        "rm .gitignore .aider.chat.history.md notes",
    );
    let wt = &report["worktree"];
    assert_eq!(wt["removed"], true, "{report}");
    assert_eq!(wt["branch_kept"], true, "{report}");
}

/// What the project's own `info/exclude` ignores, and what a directory the job made ignores of
/// itself (a virtual environment's `.gitignore` of `*`), still never keeps a worktree.
#[test]
fn the_projects_own_excludes_and_a_made_directorys_gitignore_keep_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let exclude = repo.join(".git/info/exclude");
    let mut rules = fs::read_to_string(&exclude).unwrap_or_default();
    rules.push_str("*.log\n");
    fs::write(&exclude, rules).unwrap();
    let script = "echo noise > build.log && mkdir venv && printf '*\\n' > venv/.gitignore && \
                  echo x > venv/pyvenv.cfg";
    let (out, report) = env.worktree_job(&repo, &[], script);
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], true, "{report}");
}

/// A repository among the ignored files (`target/` is ignored): a commit made in it, or a file
/// left uncommitted there, is no ignored file's to lose, at any depth and in a bare repository
/// too. The job's clone of a repository, left as cloned, holds nothing and keeps nothing.
#[test]
fn a_repository_the_job_committed_in_among_ignored_files_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let commit = "git -c user.name=j -c user.email=j@x commit -q -m mine";
    for (plant, shown) in [
        (
            format!(
                "git init -q target/dep && cd target/dep && echo x > f && git add f && {commit}"
            ),
            "target/dep",
        ),
        (
            format!(
                "git init -q target/a/b/dep && cd target/a/b/dep && echo x > f && git add f && \
                 {commit}"
            ),
            "target/a/b/dep",
        ),
        (
            "git init -q target/dep && echo draft > target/dep/notes.md".to_string(),
            "target/dep",
        ),
        (
            format!(
                "git init -q --bare target/store.git && git init -q target/s && cd target/s && \
                 echo x > f && git add f && {commit} && git push -q ../store.git HEAD:main && \
                 cd .. && rm -rf s"
            ),
            "target/store.git",
        ),
    ] {
        let (out, report) = env.worktree_job(&repo, &[], &plant);
        assert_status(&out, 0);
        assert_eq!(report["worktree"]["removed"], false, "{plant}: {report}");
        let wt = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
        assert!(wt.join(shown).is_dir(), "{plant}");
        assert!(report.to_string().contains(shown), "{plant}: {report}");
    }
    let url = repo.to_str().unwrap();
    let (out, report) = env.worktree_job(&repo, &[], &format!("git clone -q {url} target/copy"));
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], true, "{report}");
}

/// Refs in a reftable behind decoy loose refs: gix reads only the loose ones, so every branch and
/// tag git sees (a commit the project lacks on `side`, or the user's own through `--resume`) was
/// hidden, and the worktree went with them. So did a repository extension gix does not implement.
#[test]
fn refs_or_an_extension_gix_cannot_read_keep_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // The trap: refs migrated to a reftable, then loose refs gix reads instead, HEAD's branch at
    // the base among them.
    let trap = "B=$(git symbolic-ref HEAD) && BASE=$(git rev-parse $B) && rm -rf .git/logs && \
                git refs migrate --ref-format=reftable && echo \"ref: $B\" > .git/HEAD && \
                rm -rf .git/refs/heads && mkdir -p $(dirname .git/$B) && echo $BASE > .git/$B && \
                test -d .git/reftable";
    let decoy = format!(
        "BASE=$(git rev-parse HEAD) && echo side > side.txt && git add side.txt && \
         git -c user.name=j -c user.email=j@x commit -q -m side && git branch side && \
         git tag v1 && git reset -q --hard $BASE && {trap} && test \"$(git branch --list side)\""
    );
    let (out, report) = env.worktree_job(&repo, &[], &decoy);
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    assert!(report.to_string().contains("reftable"), "{report}");
    let wt = PathBuf::from(report["worktree"]["path"].as_str().unwrap());
    let side = env.git(&wt, ["log", "-1", "--format=%s", "side"]);
    assert_eq!(side.trim(), "side");

    // The user's commit on a branch of their own, through `--resume`, after the job set the
    // trap: nothing of the job runs then.
    let (wt, id) = kept_job(&env, &repo, trap);
    let report = resume(
        &env,
        &repo,
        &id,
        "git switch -q -c feat && echo mine > feat.txt && git add feat.txt && \
         git -c user.name=u -c user.email=u@x commit -q -m 'the users feature' && \
         git switch -q -",
    );
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    let feat = env.git(&wt, ["log", "-1", "--format=%s", "feat"]);
    assert_eq!(feat.trim(), "the users feature");

    for extension in ["refStorage files2", "objectFormat sha256x", "someday true"] {
        let (key, value) = extension.split_once(' ').unwrap();
        let plant = format!(
            "git config core.repositoryformatversion 1 && git config extensions.{key} {value}"
        );
        let (out, report) = env.worktree_job(&repo, &[], &plant);
        assert_status(&out, 0);
        assert_eq!(
            report["worktree"]["removed"], false,
            "{extension}: {report}"
        );
        assert!(
            report.to_string().contains("extensions."),
            "{extension}: {report}"
        );
    }
}

/// An index whose entry offset table (IEOT) names other entries than the ones git reads: gix,
/// decoding the chunks the table names on several threads, saw the index as checked out while
/// git's status showed a staged file whose content only the job's store holds. And a split index,
/// whose entries git and gix merge from two files differently.
#[test]
fn an_index_git_and_gix_would_read_differently_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lying-ieot.py");
    let lying = format!(
        "printf 'staged work\\n' > n && N=$(git hash-object -w n) && rm n && \
         python3 {} .git/index README $N && git status --porcelain | grep -q '^M. README$'",
        script.display()
    );
    let (out, report) = env.worktree_job(&repo, &[], &lying);
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    assert_eq!(report["worktree"]["dirty"]["modified"], 1, "{report}");

    let (out, report) = env.worktree_job(&repo, &[], "git update-index --split-index");
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    assert!(report.to_string().contains("split"), "{report}");
}

/// A job that hides an edit from git's status through stat data: its index made to record each
/// file's present `lstat` (tests/data/forge-stat.py), or its configuration told to trust no
/// change time with the edited file's modification time put back. git's status inside the job
/// sees nothing either way; the cleanup reads each file changed since isolate's checkout ended,
/// and keeps the worktree with the edit.
#[test]
fn stat_data_the_job_forged_never_hides_an_edit() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/forge-stat.py");
    let forged = format!(
        "printf 'HELLO\\n' > README && python3 {} .git/index && test -z \"$(git status --porcelain)\"",
        script.display()
    );
    let untrusting = "git config core.trustCTime false && git config core.checkStat minimal && \
         M=$(stat -c %y README) && printf 'HELLO\\n' > README && touch -d \"$M\" README && \
         touch -d '+2 seconds' .git/index && test -z \"$(git status --porcelain)\"";
    for job in [forged.as_str(), untrusting] {
        let (out, report) = env.worktree_job(&repo, &[], job);
        assert_status(&out, 0);
        assert_eq!(report["worktree"]["removed"], false, "{job}: {report}");
        assert_eq!(
            report["worktree"]["dirty"]["modified"], 1,
            "{job}: {report}"
        );
        let kept = Path::new(report["worktree"]["path"].as_str().unwrap());
        assert_eq!(fs::read_to_string(kept.join("README")).unwrap(), "HELLO\n");
    }
}

/// A name in another Unicode form than a tracked one's is another file on Linux, as git's status
/// there sees it: the job's `core.precomposeUnicode` made the cleanup's walk take the user's new
/// `cafe\u{301}.rs` for the tracked `caf\u{e9}.rs`.
#[test]
fn a_name_the_jobs_configuration_would_precompose_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::write(repo.join("src/caf\u{e9}.rs"), "tracked\n").unwrap();
    env.git(&repo, ["add", "src"]);
    env.git(&repo, ["commit", "-q", "-m", "composed"]);
    let (wt, id) = kept_job(&env, &repo, "git config core.precomposeUnicode true");
    let report = resume(&env, &repo, &id, "echo 'new work' > src/cafe\u{301}.rs");
    assert_eq!(report["worktree"]["removed"], false, "{report}");
    assert_eq!(report["worktree"]["dirty"]["untracked"], 1, "{report}");
    assert!(wt.join("src/cafe\u{301}.rs").exists());
}

/// A repository the status never looks into holds commits all the same: one made in a directory
/// of tracked files (its `.git` skipped by the walk, as git's status skips it), one made inside the
/// job's git directory, a bare one there, one inside a nested repository's git directory or a
/// bare one's, a bare one whose HEAD is a link, a linked worktree's git directory out of place.
/// Each keeps the worktree, named; a worktree whose git directory holds only git's own goes as
/// before.
#[test]
fn a_repository_no_status_walks_into_keeps_the_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let commit = "git -c user.name=j -c user.email=j@j commit -qm";
    let cases = [
        (
            format!(
                "cd src && git init -q && git add lib.txt && {commit} base && git checkout -qb f && \
                 echo work > w && git add w && {commit} work && git checkout -q - && cd .. && \
                 test -z \"$(git status --porcelain --ignored)\""
            ),
            "src",
        ),
        (
            format!(
                "mkdir .git/side && cd .git/side && git init -q && echo work > w && git add w && \
                 {commit} work && rm w"
            ),
            ".git/side",
        ),
        (
            "git init -q --bare .git/hid.git && \
             git --git-dir=.git/hid.git --work-tree=src add lib.txt && \
             git --git-dir=.git/hid.git --work-tree=src -c user.name=j -c user.email=j@j \
             commit -qm work"
                .to_string(),
            ".git/hid.git",
        ),
        (
            // Inside the git directory of a clean clone among the ignored files.
            format!(
                "P=$(dirname \"$(dirname \"$(cat .git/objects/info/alternates)\")\") && \
                 git clone -q \"$P\" target/lib && mkdir target/lib/.git/side && \
                 cd target/lib/.git/side && git init -q && echo work > w && git add w && \
                 {commit} work && rm w"
            ),
            "target/lib",
        ),
        (
            // Inside a bare repository, itself inside the git directory.
            format!(
                "git init -q --bare .git/x.git && git init -q .git/x.git/y && cd .git/x.git/y && \
                 echo work > w && git add w && {commit} work"
            ),
            ".git/x.git/y",
        ),
        (
            // A bare repository whose HEAD is a link, which git follows.
            "git init -q --bare .git/x.git && cd .git/x.git && ln -sf refs/heads/main HEAD && \
             t=$(git mktree </dev/null) && c=$(git -c user.name=j -c user.email=j@j \
             commit-tree $t -m work) && git update-ref refs/heads/main $c"
                .to_string(),
            ".git/x.git",
        ),
        (
            // A linked worktree's git directory outside `.git/worktrees`, naming a commit only
            // the job's store holds.
            "t=$(git mktree </dev/null) && c=$(git -c user.name=j -c user.email=j@j commit-tree \
             $t -m work) && mkdir -p .git/foo/w && echo $c > .git/foo/w/HEAD && \
             echo ../.. > .git/foo/w/commondir && git --git-dir=.git/foo/w log -1 >/dev/null"
                .to_string(),
            ".git/foo/w",
        ),
    ];
    for (job, shown) in &cases {
        let (out, report) = env.worktree_job(&repo, &[], job);
        assert_status(&out, 0);
        assert_eq!(report["worktree"]["removed"], false, "{job}: {report}");
        let reason = report["worktree"]["reason"].as_str().unwrap();
        assert!(reason.contains(shown), "{job}: {reason}");
    }
    let (out, report) = env.worktree_job(&repo, &[], "git gc -q && git status >/dev/null");
    assert_status(&out, 0);
    assert_eq!(report["worktree"]["removed"], true, "{report}");
}
