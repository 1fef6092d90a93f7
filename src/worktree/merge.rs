//! One job's branch into its project branch (spec/worktrees.md, "Handoff, merge and sync"). First
//! the job's commits are imported (when its worktree is there) and the job's own change is shown:
//! its commits beyond the project branch, the files of `merge-base...tip`, and how far the project
//! branch moved since the job's base. Then the merge is computed in the project from objects alone
//! (`git merge-tree --write-tree`, then `commit-tree` with the project branch as first parent and
//! the job's tip as second), so nothing planted in the job's repository runs and no worktree is
//! needed; the commit is checked to be the merge of exactly what was shown, and the project branch
//! is fast-forwarded to it only if it is still at the commit that was shown and the project's
//! checkout has no uncommitted changes to the files involved; then verified. A merge that conflicts
//! is made in the job's worktree instead (recreated from its branch when it was removed),
//! sandboxed under the job's policy with its hooks off, and left there: the project is never
//! half-merged.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::git;
use crate::git::project::Project;
use crate::job::record::Record;
use crate::job::store;
use crate::sandbox::policy::Loaded;
use crate::worktree::checkouts::{self, Hold};
use crate::worktree::cleanup::{self, Recorded, Settling};
use crate::worktree::create;
use crate::worktree::sandboxed;
use crate::worktree::standing;

/// One file the merge changes on the project branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// git's status letter: `A`dded, `M`odified, `D`eleted, `T`ype changed.
    pub status: char,
    pub path: String,
}

/// What would land: the job's own change, as shown before asking.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The project branch (its short name).
    pub target: String,
    /// The project branch's commit when shown: the merge's first parent.
    pub shown: String,
    /// The job's tip: the merge's second parent.
    pub tip: String,
    /// The merged tree (`merge-tree --write-tree` of the two: they are commit ids, so it is what
    /// lands); `None` when they conflict.
    pub tree: Option<String>,
    /// The job's commits the project branch does not have.
    pub commits: usize,
    /// What the merge changes on the project branch (the files of `merge-base...tip`, unless the
    /// two histories criss-cross, where git merges against a base of its own making); for a
    /// conflict, the files of `merge-base...tip`.
    pub changes: Vec<Change>,
    /// The project branch's commits since the job's base (0: it has not moved).
    pub moved: usize,
}

impl Preview {
    /// The paths of the changes.
    pub fn files(&self) -> Vec<String> {
        self.changes.iter().map(|c| c.path.clone()).collect()
    }
}

/// What a look at a job before merging found.
#[derive(Debug)]
pub enum Plan {
    /// The project branch has every commit of the job, or the change of each (a rebase or
    /// cherry-pick), or merging would change nothing (a squash merge).
    AlreadyIn {
        target: String,
    },
    Merge(Preview),
}

/// How a merge ended.
#[derive(Debug)]
pub enum Landing {
    /// The project branch is at `commit`, the merge.
    Landed { commit: String },
    /// The job's change conflicts with the project branch: the merge is in progress in the job's
    /// worktree, left for the user to resolve.
    Conflicted {
        worktree: PathBuf,
        files: Vec<String>,
        /// The worktree had been removed and was made again from the job's branch.
        recreated: bool,
    },
}

/// git 2.38 has `merge-tree --write-tree`.
pub fn require_git() -> Result<()> {
    git::require(2, 38, "isolate merge (git merge-tree --write-tree)")
}

/// Imports the job's commits when its worktree is there, and reads what a merge would bring.
pub fn preview(recorded: &Recorded) -> Result<Plan> {
    let target = target(recorded)?;
    let project = &recorded.project;
    let path = recorded.checked_path()?;
    if path.is_dir() {
        cleanup::import_now(&recorded.job(Settling::End { keep: true }))?;
    }
    let branch = recorded.id.branch();
    let target_ref = format!("refs/heads/{target}");
    let job_ref = format!("refs/heads/{branch}");
    let [shown, tip] = refs(project, [&target_ref, &job_ref])?;
    let shown = shown.ok_or_else(|| {
        Error::Refused(format!("the project has no branch {target} to merge into"))
    })?;
    let tip = tip.ok_or_else(|| {
        Error::Refused(format!(
            "the project has no branch {branch}: nothing of job {} to merge",
            recorded.id
        ))
    })?;
    let standing = standing::standing(&project.top, &shown, &tip)?;
    if standing.landed() {
        return Ok(Plan::AlreadyIn { target });
    }
    let tree = merge_tree(project, &shown, &tip)?;
    let changes = match &tree {
        Some(tree) => changes(project, &shown, tree)?,
        None => {
            let fork = git::run(
                &project.top,
                ["merge-base", "--end-of-options", &shown, &tip],
            )?
            .text();
            changes(project, &fork, &tip)?
        }
    };
    let (moved, _) = left_right(project, &shown, &recorded.worktree.base)?;
    Ok(Plan::Merge(Preview {
        target,
        shown,
        tip,
        tree,
        commits: standing.ahead,
        changes,
        moved,
    }))
}

/// Merges what `preview` showed, with `message`. `record` and `job_dir` are the job's, updated
/// when a conflict makes its worktree again.
pub fn land(
    recorded: &Recorded,
    record: &Record,
    job_dir: &Path,
    policy: &Loaded,
    preview: &Preview,
    message: &str,
) -> Result<Landing> {
    let project = &recorded.project;
    let target_ref = format!("refs/heads/{}", preview.target);
    let moved = || {
        Error::Refused(format!(
            "{} moved since the preview; nothing merged into it (run isolate merge again)",
            preview.target
        ))
    };
    if rev(project, &target_ref)? != preview.shown {
        return Err(moved());
    }
    // 1. The merge, computed in the project from objects alone when the preview was: no worktree,
    // nothing of the job's repository (hooks, drivers, configuration) is read or run.
    let Some(tree) = &preview.tree else {
        return conflict(recorded, record, job_dir, policy, preview);
    };
    let result = git::run(
        &project.top,
        [
            "commit-tree",
            "-p",
            &preview.shown,
            "-p",
            &preview.tip,
            "-m",
            message,
            "--end-of-options",
            tree,
        ],
    )?
    .text();
    // What lands is what was shown: the merge of exactly the shown commits, nothing else.
    let landed = git::run(
        &project.top,
        // (No --end-of-options: rev-parse would print it. `result` is the hex id commit-tree gave.)
        [
            "rev-parse",
            &format!("{result}^{{tree}}"),
            &format!("{result}^1"),
            &format!("{result}^2"),
        ],
    )?
    .text();
    let expected = format!("{tree}\n{}\n{}", preview.shown, preview.tip);
    if landed != expected {
        return Err(Error::Other(format!(
            "the merge commit {result} is not the merge that was shown; nothing merged into {}",
            preview.target
        )));
    }
    // 2. Fast-forward, only from the commit that was shown, never where a checkout is in the
    // middle of a rebase or bisect of the branch, and in a checkout that has it only over files
    // the merge does not touch (uncommitted changes, untracked and ignored files are the user's).
    match checkouts::holding(project, &target_ref)? {
        Some(held) if held.hold != Hold::CheckedOut => {
            return Err(Error::Refused(format!(
                "{} is {held}; nothing merged into it",
                preview.target
            )))
        }
        Some(held) => fast_forward(project, &held.dir, preview, &result, &target_ref)?,
        None => {
            git::run(
                &project.top,
                [
                    "update-ref",
                    "-m",
                    "isolate merge",
                    "--end-of-options",
                    &target_ref,
                    &result,
                    &preview.shown,
                ],
            )
            .map_err(|_| moved())?;
        }
    }
    // 3. Verify.
    if rev(project, &target_ref)? != result {
        return Err(Error::Other(format!(
            "{} is not at {result} after the fast-forward; check the project",
            preview.target
        )));
    }
    Ok(Landing::Landed { commit: result })
}

/// The longest file name (`NAME_MAX`) and path (`PATH_MAX`) a checkout can hold.
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// The checkout `dir` of the project branch, fast-forwarded from `preview.shown` to `result`: only
/// if nothing of the user's is where the merge writes, and every name fits the filesystem (git
/// would fail part-way and leave the checkout half-merged). If git fails all the same, the files
/// the merge touched are put back as they were at `preview.shown`.
fn fast_forward(
    project: &Project,
    dir: &Path,
    preview: &Preview,
    result: &str,
    target_ref: &str,
) -> Result<()> {
    let involved = changes(project, &preview.shown, result)?;
    let refused = |why: String| {
        Error::Refused(format!(
            "{why}; nothing merged into {} (checkout {})",
            preview.target,
            dir.display()
        ))
    };
    let top_len = dir.as_os_str().len() + 1;
    if let Some(long) = involved.iter().find(|c| {
        top_len + c.path.len() >= PATH_MAX || c.path.split('/').any(|part| part.len() > NAME_MAX)
    }) {
        return Err(refused(format!(
            "{} is a name longer than a checkout can hold",
            crate::controls::name(&long.path)
        )));
    }
    // `:(literal)`: a name the job chose is a path, never pathspec magic.
    let literal: Vec<String> = involved
        .iter()
        .map(|c| format!(":(literal){}", c.path))
        .collect();
    let mut args = vec![
        "status",
        "--porcelain",
        "--untracked-files=all",
        "--ignored=matching",
        "--",
    ];
    args.extend(literal.iter().map(String::as_str));
    let dirty = git::run(dir, &args)?.text();
    if !dirty.is_empty() {
        let shown: Vec<String> = dirty.lines().map(crate::controls::name).collect();
        return Err(refused(format!(
            "the checkout has changes of its own (uncommitted, untracked or ignored) where the merge writes:\n{}",
            shown.join("\n")
        )));
    }
    if rev(project, target_ref)? != preview.shown {
        return Err(refused(format!(
            "{} moved since the preview",
            preview.target
        )));
    }
    // --no-overwrite-ignore: an ignored file or directory in the way (a `.env`, `data/`) stops the
    // merge rather than go.
    let merged = git::try_run(
        dir,
        [
            "merge",
            "--ff-only",
            "--quiet",
            "--no-overwrite-ignore",
            result,
        ],
    )?;
    if merged.status.success() {
        return Ok(());
    }
    restore(dir, preview, &involved);
    Err(Error::git(
        "merge --ff-only (in the project's checkout, which is put back as it was)",
        merged.status.code(),
        &merged.stderr,
    ))
}

/// After a fast-forward that failed part-way: the files the merge touched as they were at the
/// commit shown (those it added, where nothing of the user's was in the way, removed again).
fn restore(dir: &Path, preview: &Preview, involved: &[Change]) {
    let (added, existed): (Vec<&Change>, Vec<&Change>) =
        involved.iter().partition(|c| c.status == 'A');
    if !existed.is_empty() {
        let mut args = vec![
            "checkout".to_string(),
            preview.shown.clone(),
            "--".to_string(),
        ];
        args.extend(existed.iter().map(|c| format!(":(literal){}", c.path)));
        let _ = git::try_run(dir, &args);
    }
    for change in added {
        let path = dir.join(&change.path);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir()) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// The project branch the job started from.
fn target(recorded: &Recorded) -> Result<String> {
    recorded.worktree.project_branch.clone().ok_or_else(|| {
        Error::Refused(format!(
            "job {} started on a detached HEAD: there is no project branch to merge into \
             (git merge --no-ff {} yourself)",
            recorded.id,
            recorded.id.branch()
        ))
    })
}

/// A merge that conflicts is made in the job's worktree (made again from its branch when it was
/// removed), sandboxed under the job's policy with hooks off, and left there for the user.
fn conflict(
    recorded: &Recorded,
    record: &Record,
    job_dir: &Path,
    policy: &Loaded,
    preview: &Preview,
) -> Result<Landing> {
    let project = &recorded.project;
    let path = recorded.checked_path()?;
    let recreated = !path.is_dir();
    if recreated {
        recreate(recorded, record, job_dir, policy, &preview.tip)?;
    } else {
        // The merge goes where the job's work is: never over work not committed yet, never on top
        // of a merge (or rebase) left in progress.
        let resume = format!("isolate run --resume {} -- \"$SHELL\"", recorded.id);
        let insp = cleanup::inspect_bounded(path, &recorded.id.branch())
            .map_err(|why| Error::Refused(format!("cannot read the job's worktree: {why}")))?;
        if let Some(op) = insp.in_progress.first() {
            return Err(Error::Refused(format!(
                "a {op} is in progress in {}: finish it there ({resume}), then run isolate merge again",
                path.display()
            )));
        }
        if insp.modified + insp.untracked + insp.conflicted > 0 {
            return Err(Error::Refused(format!(
                "{} conflicts with {}, and the job's worktree {} has work not committed: commit it \
                 there ({resume}), then run isolate merge again",
                recorded.id.branch(),
                preview.target,
                path.display()
            )));
        }
    }
    let merged = sandboxed::git(
        project,
        path,
        policy,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "merge",
            "--no-edit",
            "--no-ff",
            &preview.shown,
        ],
    )?;
    let conflicts = sandboxed::git(
        project,
        path,
        policy,
        &["diff", "--name-only", "--diff-filter=U"],
    )?;
    let files: Vec<String> = conflicts.stdout.lines().map(str::to_string).collect();
    if merged.status == 0 || files.is_empty() {
        return Err(Error::Refused(format!(
            "{} and {} do not merge cleanly in the project, and the worktree's merge said: {}; nothing merged",
            preview.target,
            recorded.id.branch(),
            merged.stderr.trim()
        )));
    }
    Ok(Landing::Conflicted {
        worktree: path.to_path_buf(),
        files,
        recreated,
    })
}

/// The job's worktree, made again at its place from the job's branch: a fresh repository borrowing
/// the project's objects, its base pinned again, checked out at `tip` in the sandbox (the tree is
/// the job's: its attributes choose filters). The record says the worktree is back.
fn recreate(
    recorded: &Recorded,
    record: &Record,
    job_dir: &Path,
    policy: &Loaded,
    tip: &str,
) -> Result<()> {
    let project = &recorded.project;
    let path = recorded.checked_path()?;
    std::fs::create_dir_all(&recorded.key_dir)
        .map_err(|e| Error::io("cannot create", &recorded.key_dir, e))?;
    create::recreate(project, &recorded.id, path, &recorded.worktree.base)?;
    let mut back = record.clone();
    if let Some(wt) = back.worktree.as_mut() {
        wt.removed = false;
        wt.branch_kept = true;
        wt.branch_tip = Some(tip.to_string());
        wt.reason = "made again by isolate merge for a conflict".into();
        wt.handoff = Some(format!(
            "isolate run --resume {} -- \"$SHELL\"",
            recorded.id
        ));
    }
    store::write_record(job_dir, &back)?;
    cleanup::note_import(job_dir, tip);
    let branch = recorded.id.branch();
    let out = sandboxed::git(
        project,
        path,
        policy,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "checkout.workers=0",
            "checkout",
            "--quiet",
            "--force",
            "-B",
            &branch,
            tip,
            "--",
        ],
    )?;
    if out.status != 0 {
        return Err(Error::Other(format!(
            "cannot check out {branch} in the recreated worktree {}: {}",
            path.display(),
            out.stderr.trim()
        )));
    }
    Ok(())
}

/// `git merge-tree --write-tree OURS THEIRS` in the project: the merged tree, or `None` when they
/// conflict.
fn merge_tree(project: &Project, ours: &str, theirs: &str) -> Result<Option<String>> {
    let out = git::try_run(
        &project.top,
        [
            "merge-tree",
            "--write-tree",
            "--no-messages",
            "--end-of-options",
            ours,
            theirs,
        ],
    )?;
    match out.status.code() {
        Some(0) => Ok(out.text().lines().next().map(str::to_string)),
        Some(1) => Ok(None),
        code => Err(Error::git("merge-tree --write-tree", code, &out.stderr)),
    }
}

/// The values of full ref names, in one read (`None`: no such ref).
fn refs<const N: usize>(project: &Project, names: [&str; N]) -> Result<[Option<String>; N]> {
    let mut args = vec!["for-each-ref", "--format=%(refname) %(objectname)", "--"];
    args.extend(names);
    let text = git::run(&project.top, &args)?.text();
    Ok(names.map(|name| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .map(str::to_string)
    }))
}

fn rev(project: &Project, reference: &str) -> Result<String> {
    Ok(git::run(
        &project.top,
        ["rev-parse", "--verify", "--end-of-options", reference],
    )?
    .text())
}

/// Commits of `a` not in `b`, and of `b` not in `a`.
fn left_right(project: &Project, a: &str, b: &str) -> Result<(usize, usize)> {
    let text = git::run(
        &project.top,
        [
            "rev-list",
            "--left-right",
            "--count",
            "--end-of-options",
            &format!("{a}...{b}"),
        ],
    )?
    .text();
    let mut parts = text.split_whitespace().map(str::parse::<usize>);
    match (parts.next(), parts.next()) {
        (Some(Ok(left)), Some(Ok(right))) => Ok((left, right)),
        _ => Err(Error::Other(format!(
            "git rev-list --left-right --count printed {text:?}"
        ))),
    }
}

/// What differs from `from` to `to` (commits or trees), one change a path. `--no-renames`: a rename
/// shows as the deletion and the addition it is, whatever the user's `diff.renames` (a rename
/// would list the new name only).
fn changes(project: &Project, from: &str, to: &str) -> Result<Vec<Change>> {
    let out = git::run(
        &project.top,
        [
            "diff",
            "--name-status",
            "--no-renames",
            "-z",
            "--end-of-options",
            from,
            to,
        ],
    )?;
    let mut fields = out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty());
    let mut changes = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        changes.push(Change {
            status: status.first().map(|&b| b as char).unwrap_or('M'),
            path: String::from_utf8_lossy(path).into_owned(),
        });
    }
    Ok(changes)
}
