//! `isolate merge JOB [--yes]` (spec/worktrees.md, "Handoff, merge and sync"): imports the job's
//! commits, shows the job's own change (its commits beyond the project branch, and the files of
//! `merge-base...tip`) and asks; computes the merge in the project from objects alone (`git
//! merge-tree --write-tree`, then `commit-tree` with the project branch as first parent and the
//! job's tip as second), so nothing planted in the job's repository runs and no worktree is needed;
//! checks that the commit is the merge of exactly what was shown; fast-forwards the project branch
//! only if it is still at the commit that was shown and the project's checkout has no uncommitted
//! changes to the files involved; then verifies it. A merge that conflicts is made in the job's
//! worktree instead, sandboxed under the job's policy, and left there (the project is never
//! half-merged).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::cli::MergeArgs;
use crate::command::report_error;
use crate::error::{Error, Result};
use crate::git;
use crate::job::record::State;
use crate::job::store;
use crate::worktree::cleanup::{self, Recorded};
use crate::worktree::project::Project;
use crate::worktree::sandboxed;

pub fn run(args: MergeArgs) -> i32 {
    match merge(&args) {
        Ok(()) => 0,
        Err(e) => {
            report_error(&e);
            1
        }
    }
}

fn merge(args: &MergeArgs) -> Result<()> {
    let state = store::state_dir()?;
    let (_, record) = store::resolve(&state, &args.job)?;
    if matches!(record.effective_state(), State::Running | State::Lost) {
        return Err(Error::Refused(format!(
            "job {} is {:?}: merge an ended job",
            record.id,
            record.effective_state()
        )));
    }
    let recorded = Recorded::open(&state, &record)?;
    let target = recorded.worktree.project_branch.clone().ok_or_else(|| {
        Error::Refused(format!(
            "job {} started on a detached HEAD: there is no project branch to merge into \
             (git merge --no-ff {} yourself)",
            record.id,
            recorded.id.branch()
        ))
    })?;
    let project = &recorded.project;
    let policy = crate::command::recorded_policy(&record)?;
    let path = recorded.checked_path()?.to_path_buf();
    let has_worktree = path.is_dir();
    let target_ref = format!("refs/heads/{target}");
    // Bring the job's commits in first, so the preview shows what would land.
    if has_worktree {
        cleanup::import_now(&recorded.job(true))?;
    }
    let shown = rev(project, &target_ref)?;
    let job_ref = format!("refs/heads/{}", recorded.id.branch());
    let tip = rev(project, &job_ref)?;
    // The job's own change: its commits since it and the project branch parted, and the files
    // they change (merge-base...tip), whatever the project branch did meanwhile.
    let commits = count(project, &shown, &tip)?;
    if commits == 0 {
        println!(
            "{target} already has every commit of {}",
            recorded.id.branch()
        );
        return Ok(());
    }
    let fork = merge_base(project, &shown, &tip)?;
    let files = changed_files(project, &fork, &tip)?;
    eprintln!(
        "isolate: {} commit{} of {} onto {target} ({}), changing {} file{}:",
        commits,
        if commits == 1 { "" } else { "s" },
        recorded.id.branch(),
        &shown[..12],
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    for f in files.iter().take(50) {
        eprintln!("  {f}");
    }
    if files.len() > 50 {
        eprintln!("  … and {} more", files.len() - 50);
    }
    if !args.yes && !confirm(&format!("Merge into {target}? [y/N] "))? {
        return Err(Error::Refused("not merged".into()));
    }

    let moved = || {
        Error::Refused(format!(
            "{target} moved since the preview; nothing merged into it (run isolate merge again)"
        ))
    };
    if rev(project, &target_ref)? != shown {
        return Err(moved());
    }
    // 1. The merge, computed in the project from objects alone: no worktree, nothing of the job's
    // repository (hooks, drivers, configuration) is read or run.
    let tree = match merge_tree(project, &shown, &tip)? {
        Some(tree) => tree,
        None => {
            return conflict(
                project,
                &recorded,
                &policy,
                &path,
                has_worktree,
                &target,
                &shown,
            )
        }
    };
    let message = format!("Merge branch '{}'", recorded.id.branch());
    let result = git::run(
        &project.top,
        [
            "commit-tree",
            "-p",
            &shown,
            "-p",
            &tip,
            "-m",
            &message,
            "--end-of-options",
            &tree,
        ],
    )?
    .text();
    // What lands is what was shown: the merge of exactly the shown commits, nothing else.
    let landed = [
        rev(project, &format!("{result}^{{tree}}"))?,
        rev(project, &format!("{result}^1"))?,
        rev(project, &format!("{result}^2"))?,
    ];
    if landed != [tree.as_str(), shown.as_str(), tip.as_str()] {
        return Err(Error::Other(format!(
            "the merge commit {result} is not the merge that was shown; nothing merged into {target}"
        )));
    }
    // 2. Fast-forward, only from the commit that was shown, only over a checkout that has no
    // uncommitted changes to the files involved.
    if rev(project, &target_ref)? != shown {
        return Err(moved());
    }
    let involved = changed_files(project, &shown, &result)?;
    let checkout = checkout_of(project, &target_ref)?;
    if let Some(dir) = &checkout {
        let mut args = vec!["status", "--porcelain", "--untracked-files=no", "--"];
        args.extend(involved.iter().map(String::as_str));
        let dirty = git::run(dir, &args)?.text();
        if !dirty.is_empty() {
            return Err(Error::Refused(format!(
                "the checkout {} has uncommitted changes to files the merge changes:\n{dirty}\nnothing merged into {target}",
                dir.display()
            )));
        }
        git::run(dir, ["merge", "--ff-only", "--quiet", &result])?;
    } else {
        git::run(
            &project.top,
            [
                "update-ref",
                "-m",
                "isolate merge",
                "--end-of-options",
                &target_ref,
                &result,
                &shown,
            ],
        )?;
    }
    // 3. Verify.
    if rev(project, &target_ref)? != result {
        return Err(Error::Other(format!(
            "{target} is not at {result} after the fast-forward; check the project"
        )));
    }
    println!(
        "{target} is now at {} ({} commit{} of {})",
        &result[..12],
        commits,
        if commits == 1 { "" } else { "s" },
        recorded.id.branch()
    );
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
        code => Err(Error::Git {
            args: "merge-tree --write-tree".into(),
            code,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }),
    }
}

/// A merge that conflicts is made in the job's worktree, sandboxed under the job's policy, and
/// left there for the user: the project is never half-merged.
fn conflict(
    project: &Project,
    recorded: &Recorded,
    policy: &crate::sandbox::policy::Loaded,
    path: &Path,
    has_worktree: bool,
    target: &str,
    shown: &str,
) -> Result<()> {
    if !has_worktree {
        return Err(Error::Refused(format!(
            "{} conflicts with {target}, and job {}'s worktree is gone; resolve it on a branch of \
             your own (git -C {} merge --no-ff {}) or continue the job's branch \
             (isolate run --worktree --base {} …)",
            recorded.id.branch(),
            recorded.id,
            project.top.display(),
            recorded.id.branch(),
            recorded.id.branch()
        )));
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
            shown,
        ],
    )?;
    let conflicts = sandboxed::git(
        project,
        path,
        policy,
        &["diff", "--name-only", "--diff-filter=U"],
    )?;
    let names: Vec<&str> = conflicts.stdout.lines().collect();
    if merged.status == 0 || names.is_empty() {
        return Err(Error::Refused(format!(
            "{target} and {} do not merge cleanly in the project ({}); nothing merged",
            recorded.id.branch(),
            merged.stderr.trim()
        )));
    }
    Err(Error::Refused(format!(
        "merging {target} into the job's branch conflicts in {}; resolve them in {} and run isolate merge again",
        names.join(", "),
        path.display()
    )))
}

fn merge_base(project: &Project, a: &str, b: &str) -> Result<String> {
    Ok(git::run(&project.top, ["merge-base", "--end-of-options", a, b])?.text())
}

fn rev(project: &Project, reference: &str) -> Result<String> {
    Ok(git::run(
        &project.top,
        ["rev-parse", "--verify", "--end-of-options", reference],
    )?
    .text())
}

fn count(project: &Project, from: &str, to: &str) -> Result<usize> {
    let text = git::run(
        &project.top,
        [
            "rev-list",
            "--count",
            "--end-of-options",
            &format!("{from}..{to}"),
        ],
    )?
    .text();
    text.parse()
        .map_err(|_| Error::Other(format!("git rev-list --count printed {text:?}")))
}

fn changed_files(project: &Project, from: &str, to: &str) -> Result<Vec<String>> {
    let out = git::run(
        &project.top,
        ["diff", "--name-only", "-z", "--end-of-options", from, to],
    )?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// The checkout (main or linked worktree) that has `reference` checked out, if any.
fn checkout_of(project: &Project, reference: &str) -> Result<Option<PathBuf>> {
    let list = git::run(&project.top, ["worktree", "list", "--porcelain", "-z"])?;
    let mut current: Option<PathBuf> = None;
    for field in list.stdout.split(|&b| b == 0) {
        let field = String::from_utf8_lossy(field);
        if let Some(path) = field.strip_prefix("worktree ") {
            current = Some(PathBuf::from(path));
        } else if field.strip_prefix("branch ") == Some(reference) {
            return Ok(current.filter(|p| Path::new(p).is_dir()));
        }
    }
    Ok(None)
}

/// Asks on the terminal; without one, the answer must come as --yes.
fn confirm(question: &str) -> Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err(Error::Refused(
            "not asking without a terminal: pass --yes to merge".into(),
        ));
    }
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    stdin
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::io("cannot read the answer", "stdin", e))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}
