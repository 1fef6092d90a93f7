//! Where a job's branch stands against the project branch, read in the project only: how many of its
//! commits the project branch lacks, counted by patch as `git cherry` sees them (a rebase or
//! cherry-pick of them counts as merged; a merge commit always counts, for git cherry does not see
//! merges; a patch git cherry matched counts only if the project branch has it with its whitespace
//! too, which git's patch ids leave out), and none when merging it would change nothing (a squash
//! merge); and how many commits of the project branch it lacks. `rm`, `prune`, `worktrees` and
//! `merge` all read it here.

use std::path::Path;

use crate::error::{Error, GitProblem, Result};
use crate::git;

/// A job's branch against the project branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// The branch's commits the project branch does not have by id.
    pub ahead: usize,
    /// The branch's commits whose change the project branch does not have (0: it has landed).
    pub unmerged: usize,
    /// The project branch's commits the job's branch does not have.
    pub behind: usize,
}

impl Standing {
    /// The project branch has all of the job's work.
    pub fn landed(&self) -> bool {
        self.unmerged == 0
    }
}

/// `branch` against `target` (each a full ref name or a commit id), in the project at `top`.
pub fn standing(top: &Path, target: &str, branch: &str) -> Result<Standing> {
    let (behind, ahead) = left_right(top, target, branch)?;
    let mut unmerged = 0;
    if ahead > 0 {
        // Commits whose patch the project branch does not have ("+" in git cherry). git cherry
        // passes over merge commits, and a merge can hold work of its own (a resolution, an amend):
        // each counts as unmerged until the tree says otherwise.
        let cherry = git::run(top, ["cherry", "--end-of-options", target, branch])?.text();
        unmerged = cherry.lines().filter(|l| l.starts_with('+')).count();
        let merges = git::run(
            top,
            [
                "rev-list",
                "--count",
                "--merges",
                "--end-of-options",
                &format!("{target}..{branch}"),
            ],
        )?
        .text();
        unmerged += merges.parse::<usize>().unwrap_or(1);
        // A patch id is made with the whitespace of each line left out: a commit that differs
        // from the project branch's only there (an indentation Python reads, the spaces of a
        // string) matched ("-"). Each match must hold with the whitespace kept.
        let matched: Vec<&str> = cherry
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .collect();
        unmerged += matched_only_without_whitespace(top, target, branch, &matched)?;
        if unmerged > 0 && merges_to_nothing(top, target, branch)? {
            // A squash merge: no single commit matches, but merging would change nothing.
            unmerged = 0;
        }
    }
    Ok(Standing {
        ahead,
        unmerged,
        behind,
    })
}

/// How many of `matched` (commits of `branch` whose patch git cherry found among `target`'s) no
/// commit of `target`'s since `branch` makes as they are, whitespace included (`git patch-id
/// --verbatim`). Only the files the matched commits change are diffed on `target`'s side: a commit
/// there that changes others too shows only those, and can then match nothing (kept: safe).
fn matched_only_without_whitespace(
    top: &Path,
    target: &str,
    branch: &str,
    matched: &[&str],
) -> Result<usize> {
    if matched.is_empty() {
        return Ok(0);
    }
    let names = [
        "diff-tree",
        "--no-commit-id",
        "--name-only",
        "-r",
        "-z",
        "--stdin",
    ];
    let input: String = matched.iter().map(|c| format!("{c}\n")).collect();
    let paths = git::run_with_input(top, names, input.as_bytes())?.stdout;
    let mut paths: Vec<&[u8]> = paths.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
    paths.sort();
    paths.dedup();
    // Too many names for one command line: every file of theirs is diffed instead.
    if paths.iter().map(|p| p.len() + 1).sum::<usize>() > PATHS_MAX {
        paths.clear();
    }
    let theirs = verbatim_ids(top, &[format!("{branch}..{target}")], &paths)?;
    let mut walk = vec!["--no-walk=unsorted".to_string()];
    walk.extend(matched.iter().map(|c| c.to_string()));
    let ours = verbatim_ids(top, &walk, &[])?;
    // A commit with no patch id has no patch: an empty commit changes nothing.
    let landed = |commit: &&str| {
        let mut ids = ours.iter().filter(|(_, of)| of == commit).peekable();
        ids.peek().is_none() || ids.any(|(id, _)| theirs.iter().any(|(other, _)| other == id))
    };
    Ok(matched.iter().filter(|c| !landed(c)).count())
}

/// The most bytes of file names passed to one `git log` (the kernel allows 2 MiB of arguments).
const PATHS_MAX: usize = 256 << 10;

/// (verbatim patch id, commit) of every commit but merges that `git log ARGS -- PATHS` lists, each
/// diffed as git shows it by default, with no driver or conversion of the user's configuration.
/// The names are the job's: literal paths, never pathspec magic (`:(exclude)`, `*`).
fn verbatim_ids(top: &Path, args: &[String], paths: &[&[u8]]) -> Result<Vec<(String, String)>> {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let mut log: Vec<&OsStr> = [
        "--literal-pathspecs",
        "log",
        "--no-show-signature",
        "-p",
        "--no-merges",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--format=commit %H",
    ]
    .iter()
    .map(OsStr::new)
    .collect();
    log.extend(args.iter().map(OsStr::new));
    log.push(OsStr::new("--"));
    log.extend(paths.iter().map(|p| OsStr::from_bytes(p)));
    let patches = git::run(top, log)?.stdout;
    let ids = git::run_with_input(top, ["patch-id", "--verbatim"], &patches)?.text();
    Ok(ids
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(id, commit)| (id.to_string(), commit.to_string()))
        .collect())
}

/// Commits of `a` not in `b`, and of `b` not in `a` (each a full ref name or a commit id), in the
/// project at `top`.
pub fn left_right(top: &Path, a: &str, b: &str) -> Result<(usize, usize)> {
    let text = git::run(
        top,
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
        _ => Err(Error::from(GitProblem::GitUnreadable {
            args: "rev-list --left-right --count",
            printed: text,
        })),
    }
}

/// Whether merging `branch` into `target` would leave `target`'s tree as it is (`git merge-tree`
/// writes only tree objects and touches no ref, index or checkout).
fn merges_to_nothing(top: &Path, target: &str, branch: &str) -> Result<bool> {
    let merged = git::try_run(
        top,
        [
            "merge-tree",
            "--write-tree",
            "--no-messages",
            "--end-of-options",
            target,
            branch,
        ],
    )?;
    if !merged.status.success() {
        return Ok(false);
    }
    let tree = git::run(
        top,
        [
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{target}^{{tree}}"),
        ],
    )?
    .text();
    Ok(merged.text().lines().next() == Some(tree.as_str()))
}
